package watching

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"testing/iotest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// FuzzEvents: whatever a watch stream holds, the decoder returns events and
// an error or the stream's end, never a panic; when client-go's dynamic
// client decodes the whole stream into objects of the operator's kind, the
// decoder returns the same events, less managedFields. Not compared (see
// the decoders' doc): the typed kinds of client-go's scheme, objects that
// client-go lets through for a case-insensitive "ApiVersion" or "KIND"
// only, and ERROR events whose object is not a Status (client-go returns
// it as it is, the decoder as a Status: both are errors to the reflector).
func FuzzEvents(f *testing.F) {
	for _, s := range []string{
		frame("ADDED", kopfExample("a", "1")) + frame("DELETED", kopfExample("a", "2")),
		frame("BOOKMARK", `{"kind":"KopfExample","apiVersion":"kopf.dev/v1","metadata":{"resourceVersion":"12345","annotations":{"k8s.io/initial-events-end":"true"}}}`),
		frame("ERROR", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}`),
		`{"object":{"kind":"X","apiVersion":"v1","metadata":{"name":"x","managedFields":[{"n":[1e3]}]},"n":[1,-1,1.5,99999999999999999999]},"extra":null,"type":"MODIFIED"}` + "\n" + `{"type":"ADDED"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeAll(newEventDecoder(io.NopCloser(iotest.HalfReader(bytes.NewReader(data)))))
		want, wantErr := decodeAll(clientGoWatchDecoder(t, io.NopCloser(bytes.NewReader(data))))
		if wantErr != nil || !unstructuredOnly(want) {
			return
		}
		if err != nil {
			t.Fatalf("%q: %v; client-go decodes %d events", data, err, len(want))
		}
		if !reflect.DeepEqual(got, withoutManagedFields(want)) {
			t.Fatalf("%q: decoded\n%#v\nclient-go decoded\n%#v", data, got, want)
		}
	})
}

// unstructuredOnly reports whether every event holds an
// *unstructured.Unstructured with its apiVersion and kind spelled so, or
// is an ERROR event with a *metav1.Status.
func unstructuredOnly(events []decoded) bool {
	for _, ev := range events {
		if ev.typ == watch.Error {
			if _, ok := ev.obj.(*metav1.Status); !ok {
				return false
			}
			continue
		}
		u, ok := ev.obj.(*unstructured.Unstructured)
		if !ok {
			return false
		}
		if _, ok := u.Object["apiVersion"].(string); !ok {
			return false
		}
		if _, ok := u.Object["kind"].(string); !ok {
			return false
		}
	}
	return true
}

// FuzzList: whatever a LIST response holds, decoding it returns a list or
// an error, never a panic; when client-go's dynamic client decodes it, the
// decoder returns the same list, less managedFields.
func FuzzList(f *testing.F) {
	for _, s := range []string{
		list(kopfExample("a", "1"), kopfExample("b", "2")),
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"data":{"n":"1"}},{"kind":"Other","metadata":{"name":"b"}}]}`,
		`{"items":[null],"kind":"XList","apiVersion":"v1"}`,
		`{"kind":"XList","apiVersion":"v1","items":[{"metadata":{"managedFields":[1e999]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeList(data)
		want, wantErr := clientGoList(t, data)
		if wantErr != nil {
			return
		}
		if err != nil {
			t.Fatalf("%q: %v; client-go decodes it", data, err)
		}
		for i := range want.Items {
			_, _ = stripManagedFields(&want.Items[i])
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded\n%#v\nclient-go decoded\n%#v", data, got, want)
		}
	})
}
