package posting

import (
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/settings"
)

// The event types Kopf posts. Event accepts any other type too; the API
// server does not restrict the types of core/v1 Events.
const (
	TypeNormal  = "Normal"  // Info, and log records at INFO
	TypeWarning = "Warning" // Warn, and log records at WARNING
	TypeError   = "Error"   // Exception, and log records at ERROR
	TypeDebug   = "Debug"   // log records at DEBUG and below
	TypeFatal   = "Fatal"   // log records above ERROR
)

// ReasonLogging is the reason of the events made of log records.
const ReasonLogging = "Logging"

// Action is the action of every event, exactly as Kopf writes it.
const Action = "Action?"

// MaxMessageLength is the API server's limit of an event's message, in
// bytes; longer messages are cut in the middle.
const MaxMessageLength = 1024

// cutInfix marks where a too long message was cut.
const cutInfix = "..."

// ObjectRef identifies the object an event is about. It is a copy of the
// object's identity taken when the event or the logger is made, so later
// changes to the object do not affect it.
//
// As a log attribute value (under logging.ObjectKey, see ForObject) it
// prints as the object's "namespace/name" ("name" when cluster-scoped), the
// same text as body.Body.Ref, both through String (fmt, the project's text
// formats) and through LogValue (slog's built-in handlers, e.g. JSON).
type ObjectRef struct {
	APIVersion string
	Kind       string
	Namespace  string // "" for cluster-scoped objects
	Name       string
	UID        string
}

// RefOf returns the reference of an object; missing parts stay empty. It
// never panics, whatever the body.
func RefOf(obj body.Body) ObjectRef {
	m := obj.Meta()
	return ObjectRef{
		APIVersion: obj.APIVersion(),
		Kind:       obj.Kind(),
		Namespace:  m.Namespace(),
		Name:       m.Name(),
		UID:        m.UID(),
	}
}

// String returns "namespace/name", or "name" for cluster-scoped objects.
func (r ObjectRef) String() string {
	if r.Namespace != "" {
		return r.Namespace + "/" + r.Name
	}
	return r.Name
}

// LogValue makes slog's handlers render the reference as String does.
func (r ObjectRef) LogValue() slog.Value { return slog.StringValue(r.String()) }

// isCoreEvent reports whether the reference is a core/v1 Event, about which
// no events are posted.
func (r ObjectRef) isCoreEvent() bool { return r.APIVersion == "v1" && r.Kind == "Event" }

// shape builds the event exactly as Kopf posts it (see the package doc).
// defaultNamespace is used for cluster-scoped objects.
func shape(ref ObjectRef, typ, reason, message string, s settings.Posting, defaultNamespace string, now time.Time) *corev1.Event {
	namespace := ref.Namespace
	if namespace == "" {
		namespace = defaultNamespace
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    namespace,
			GenerateName: s.EventNamePrefix,
		},
		Action:              Action,
		Type:                typ,
		Reason:              reason,
		Message:             cutMessage(message),
		ReportingController: s.ReportingComponent, // "reportingComponent" in JSON
		ReportingInstance:   s.ReportingInstance,
		Source:              corev1.EventSource{Component: s.ReportingComponent},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: ref.APIVersion,
			Kind:       ref.Kind,
			Name:       ref.Name,
			UID:        types.UID(ref.UID),
			Namespace:  namespace,
		},
		FirstTimestamp: metav1.NewTime(now),
		LastTimestamp:  metav1.NewTime(now),
		EventTime:      metav1.NewMicroTime(now),
	}
}

// cutMessage returns the message unchanged if it fits MaxMessageLength
// bytes, or else its beginning, "..." and its end, 1024 bytes at most.
//
// For ASCII messages this is exactly Kopf's cut (511 characters, "...",
// the last 510 characters). Kopf counts characters while the API server
// counts bytes, so Kopf's cut messages with multi-byte characters can still
// be rejected; here the cut is made by bytes, at character boundaries, so
// the result always fits. Invalid UTF-8 is replaced with U+FFFD first (as
// the JSON encoding would do, making the message longer).
func cutMessage(message string) string {
	message = strings.ToValidUTF8(message, string(utf8.RuneError))
	if len(message) <= MaxMessageLength {
		return message
	}
	headLen := MaxMessageLength/2 - len(cutInfix)/2                   // 511
	tailLen := MaxMessageLength/2 - (len(cutInfix) - len(cutInfix)/2) // 510
	head := message[:headLen]
	for len(head) > 0 && !utf8.RuneStart(message[len(head)]) {
		head = head[:len(head)-1] // do not split the character at the cut
	}
	start := len(message) - tailLen
	for start < len(message) && !utf8.RuneStart(message[start]) {
		start++
	}
	return head + cutInfix + message[start:]
}

// logEventType is the event type of a log record's level, as Kopf maps
// Python's levels: up to DEBUG "Debug", up to INFO "Normal", up to WARNING
// "Warning", up to ERROR "Error", above it "Fatal".
func logEventType(l slog.Level) string {
	switch {
	case l <= slog.LevelDebug:
		return TypeDebug
	case l <= slog.LevelInfo:
		return TypeNormal
	case l <= slog.LevelWarn:
		return TypeWarning
	case l <= slog.LevelError:
		return TypeError
	default:
		return TypeFatal
	}
}
