package watching

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
)

// The decoders of this file turn the API server's JSON into what client-go's
// dynamic client makes of it — *unstructured.Unstructured objects whose
// contents deep-equal its own, and *metav1.Status for watch errors — but in
// one pass: jsontext reads the tokens of a LIST response, or of a watch
// stream straight from the response body, and the values are built as the
// tokens come, instead of client-go's framing, meta-interpretation,
// WatchEvent decoding, re-interpretation and unstructured decoding of the
// embedded object. They also skip metadata.managedFields instead of
// building and then dropping them.
//
// What they do not reproduce: client-go's typed decoding of the kinds of
// its own scheme (Status, WatchEvent, the option kinds, in v1), which no
// watchable resource has; the case-insensitive reading of apiVersion and
// kind by its meta-interpretation (encoding/json), which accepts an object
// with "ApiVersion" and no "apiVersion" (the API server always spells
// them so: here, such an object is an error); the object of an ERROR
// event that is not a Status, which client-go returns as it is (here,
// decoded as a Status: an error to the reflector either way); and the
// wording of its errors.

// decodeList decodes a LIST response as client-go's unstructured decoding
// does: items without apiVersion and kind (as the API server sends those of
// built-in resources) get the list's, less its "List" suffix.
func decodeList(data []byte) (*unstructured.UnstructuredList, error) {
	v := newValueDecoder(newJSONDecoder(bytes.NewBuffer(data)))
	if v.dec.PeekKind() != '{' {
		return nil, endOfInput(v.readError("the beginning of a list"))
	}
	if _, err := v.dec.ReadToken(); err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{}}
	var items []unstructured.Unstructured
	for v.dec.PeekKind() != '}' {
		if v.dec.PeekKind() != '"' {
			return nil, v.readError("an object name")
		}
		name, err := v.name()
		if err != nil {
			return nil, err
		}
		if name == "items" {
			items, err = v.listItems()
		} else {
			list.Object[name], err = v.value()
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := v.dec.ReadToken(); err != nil {
		return nil, err
	}
	if err := v.end(); err != nil {
		return nil, err
	}
	gvk, err := typeMeta(list.Object)
	if err != nil {
		return nil, err
	}
	if gvk.Kind == "" {
		return nil, runtime.NewMissingKindErr(abbreviate(data))
	}
	itemKind := strings.TrimSuffix(gvk.Kind, "List")
	apiVersion := list.GetAPIVersion()
	list.Items = make([]unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		if item.GetKind() == "" && item.GetAPIVersion() == "" {
			item.SetKind(itemKind)
			item.SetAPIVersion(apiVersion)
		}
		list.Items = append(list.Items, item)
	}
	return list, nil
}

// end checks that nothing but whitespace follows the top-level value.
func (v *valueDecoder) end() error {
	if v.dec.PeekKind() == 0 {
		if _, err := v.dec.ReadToken(); err != io.EOF {
			return err
		}
		return nil
	}
	return syntaxError(v.dec.InputOffset(), errors.New("a second value after the top-level value"))
}

// endOfInput turns the io.EOF of an empty document into an error.
func endOfInput(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// listItems decodes the items of a list: an array of objects, or null.
func (v *valueDecoder) listItems() ([]unstructured.Unstructured, error) {
	switch v.dec.PeekKind() {
	case 'n':
		_, err := v.dec.ReadToken()
		return nil, err
	case '[':
	default:
		return nil, v.readError("the items of a list")
	}
	if _, err := v.dec.ReadToken(); err != nil {
		return nil, err
	}
	items := []unstructured.Unstructured{}
	for {
		var obj map[string]any
		switch v.dec.PeekKind() {
		case ']':
			_, err := v.dec.ReadToken()
			return items, err
		case '{':
			var err error
			if obj, err = v.object(resourceObject); err != nil {
				return nil, err
			}
		case 'n': // client-go decodes a null item into an empty object
			if _, err := v.dec.ReadToken(); err != nil {
				return nil, err
			}
			obj = map[string]any{}
		default:
			return nil, v.readError("an item of a list")
		}
		items = append(items, unstructured.Unstructured{Object: obj})
	}
}

// event decodes one watch event, {"type": ..., "object": {...}}, as
// client-go's watch decoder does: the object of an ERROR event into a
// *metav1.Status, the others into *unstructured.Unstructured with
// apiVersion and kind required. The stream ends (io.EOF) if it ends before
// the event's first token.
func (v *valueDecoder) event() (watch.EventType, runtime.Object, error) {
	switch v.dec.PeekKind() {
	case '{':
	case 0:
		_, err := v.dec.ReadToken()
		return "", nil, err
	default:
		return "", nil, v.readError("the beginning of a watch event")
	}
	if _, err := v.dec.ReadToken(); err != nil {
		return "", nil, err
	}
	var e rawEvent
	for v.dec.PeekKind() != '}' {
		if err := v.eventField(&e); err != nil {
			return "", nil, err
		}
	}
	if _, err := v.dec.ReadToken(); err != nil {
		return "", nil, err
	}
	return e.result()
}

// rawEvent is a watch event's fields as decoded, in whichever order they
// came.
type rawEvent struct {
	typ    string
	obj    map[string]any
	status *metav1.Status // the object, decoded as one, if "type" came first and is ERROR
	objErr error          // the object is not an object (unless a later "object" is)
}

// eventField decodes the next field of a watch event into e: its type, its
// object, or anything else (skipped).
func (v *valueDecoder) eventField(e *rawEvent) error {
	if v.dec.PeekKind() != '"' {
		return v.readError("an object name")
	}
	name, err := v.name()
	if err != nil {
		return err
	}
	switch name {
	case "type":
		switch v.dec.PeekKind() {
		case '"':
			e.typ, err = v.name() // interned: there are five
		case 'n':
			_, err = v.dec.ReadToken()
		default:
			err = v.readError("the type of a watch event")
		}
	case "object":
		// Of duplicate "object"s, the last that is not null counts, as in
		// client-go (its RawExtension ignores a null).
		switch v.dec.PeekKind() {
		case '{':
			e.obj, e.status, e.objErr = nil, nil, nil
			if watch.EventType(e.typ) == watch.Error {
				e.status, err = v.status()
			} else {
				e.obj, err = v.object(resourceObject)
			}
		case 'n':
			_, err = v.dec.ReadToken()
		default:
			e.obj, e.status = nil, nil
			offset := v.dec.InputOffset()
			if err = v.skip(); err == nil {
				e.objErr = syntaxError(offset, errors.New("expected the object of a watch event"))
			}
		}
	default:
		err = v.skip()
	}
	return err
}

// result is the event as client-go's decoder returns it, or its error.
func (e *rawEvent) result() (watch.EventType, runtime.Object, error) {
	if e.objErr != nil {
		return "", nil, e.objErr
	}
	switch t := watch.EventType(e.typ); t {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		if e.obj == nil {
			return "", nil, fmt.Errorf("a watch event of type %s without an object", t)
		}
		gvk, err := typeMeta(e.obj)
		if err != nil {
			return "", nil, err
		}
		if gvk.Kind == "" {
			return "", nil, runtime.NewMissingKindErr(abbreviateObject(e.obj))
		}
		if gvk.Version == "" {
			return "", nil, runtime.NewMissingVersionErr(abbreviateObject(e.obj))
		}
		return t, &unstructured.Unstructured{Object: e.obj}, nil
	case watch.Error:
		status := e.status
		if status == nil && e.obj != nil { // "object" came before "type"
			raw, err := json.Marshal(e.obj)
			if err == nil {
				status, err = unmarshalStatus(raw)
			}
			if err != nil {
				return "", nil, err
			}
		}
		if status == nil {
			return "", nil, errors.New("a watch event of type ERROR without an object")
		}
		return t, status, nil
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %v", e.typ)
	}
}

// status decodes the next value, an object, as client-go decodes the
// object of an ERROR event.
func (v *valueDecoder) status() (*metav1.Status, error) {
	raw, err := v.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	return unmarshalStatus(raw)
}

func unmarshalStatus(raw []byte) (*metav1.Status, error) {
	status := &metav1.Status{}
	if err := utiljson.Unmarshal(raw, status); err != nil {
		return nil, fmt.Errorf("decoding the status of an ERROR watch event: %w", err)
	}
	return status, nil
}

// typeMeta reads apiVersion and kind as client-go's meta-interpretation
// does: absent is empty, present must be a string, and the apiVersion must
// parse.
func typeMeta(obj map[string]any) (schema.GroupVersionKind, error) {
	apiVersion, err := typeMetaField(obj, "apiVersion")
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	kind, err := typeMetaField(obj, "kind")
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gv.WithKind(kind), nil
}

func typeMetaField(obj map[string]any, field string) (string, error) {
	switch v := obj[field].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("couldn't get version/kind: %s is a %T, not a string", field, v)
	}
}

// abbreviate quotes at most 256 bytes of a document in an error.
func abbreviate(data []byte) string {
	if len(data) > 256 {
		return string(data[:256]) + "..."
	}
	return string(data)
}

// abbreviateObject quotes at most 256 bytes of an object, re-encoded, in an
// error: the stream's bytes are gone once they are decoded.
func abbreviateObject(obj map[string]any) string {
	raw, err := json.Marshal(obj)
	if err != nil {
		return fmt.Sprint(obj)
	}
	return abbreviate(raw)
}

// eventDecoder is a watch.Decoder of a watch response: a stream of JSON
// objects, one per event, optionally separated by whitespace.
type eventDecoder struct {
	body  io.ReadCloser
	src   bodyReader
	value *valueDecoder
}

const (
	// maxIdleBuffer: a decoder whose buffer grew beyond this for a large
	// event is replaced by a fresh one once that event is decoded.
	maxIdleBuffer = 1 << 20
	// maxEventSize is client-go's limit of a watch event's size.
	maxEventSize = 16 << 20
)

// errEventTooLarge is a watch event over maxEventSize.
var errEventTooLarge = fmt.Errorf("a watch event is larger than %d bytes", maxEventSize)

func newEventDecoder(body io.ReadCloser) *eventDecoder {
	d := &eventDecoder{body: body, src: bodyReader{r: body}}
	d.value = newValueDecoder(newJSONDecoder(&d.src))
	return d
}

// Decode returns the next event: io.EOF if the stream ends between events,
// io.ErrUnexpectedEOF within one, and the body's other errors as they are
// (the stream watcher tells them apart). It is called by one goroutine at
// a time.
func (d *eventDecoder) Decode() (watch.EventType, runtime.Object, error) {
	dec := d.value.dec
	start := d.src.n - int64(len(d.src.pending)) - int64(len(dec.UnreadBuffer()))
	d.src.limit = start + maxEventSize
	typ, obj, err := d.value.event()
	if err != nil {
		return "", nil, d.src.cause(err)
	}
	if end := d.src.n - int64(len(d.src.pending)) - int64(len(dec.UnreadBuffer())); end-start > maxIdleBuffer {
		// jsontext keeps its grown buffer: start afresh from what it has
		// read ahead, keeping the names.
		d.src.pending = bytes.Clone(dec.UnreadBuffer())
		d.value.dec = newJSONDecoder(&d.src)
	}
	return typ, obj, nil
}

// Close closes the response body, which ends a Decode that is waiting for
// it. It may be called while Decode runs.
func (d *eventDecoder) Close() { _ = d.body.Close() }

// bodyReader reads the body for the decoder, remembering its error so that
// it can be returned as it is, and failing a read beyond limit (the end of
// the largest event allowed).
type bodyReader struct {
	r       io.Reader
	pending []byte // read ahead by a decoder since replaced
	n       int64  // bytes read from r
	limit   int64
	err     error // r's error, or errEventTooLarge
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if len(b.pending) > 0 {
		n := copy(p, b.pending)
		b.pending = b.pending[n:]
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	if b.n >= b.limit {
		b.err = errEventTooLarge
		return 0, b.err
	}
	if int64(len(p)) > b.limit-b.n {
		p = p[:b.limit-b.n]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	b.err = err
	return n, err
}

// cause returns the error to report for a decoding error: the body's own
// if it is why decoding failed, io.ErrUnexpectedEOF if the body ended
// within an event.
func (b *bodyReader) cause(err error) error {
	switch {
	case err == io.EOF:
		return io.EOF
	case b.err != nil && b.err != io.EOF && errors.Is(err, b.err):
		return b.err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return io.ErrUnexpectedEOF
	}
	return err
}
