package watching

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// kopfExample is a KopfExample (examples/obj.yaml) as the API server sends
// it after kubectl created it and an operator patched it.
func kopfExample(name, rv string) string { return kopfExampleObject(name, rv, true) }

// kopfExampleObject is a KopfExample, with or without managedFields (as
// when no field manager has written it, or as the watcher delivers it).
func kopfExampleObject(name, rv string, managed bool) string {
	managedFields := ""
	if managed {
		managedFields = `"managedFields":[{"apiVersion":"kopf.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:someannotation":{}},"f:labels":{".":{},"f:somelabel":{}}},"f:spec":{".":{},"f:duration":{},"f:field":{},"f:items":{}}},"manager":"kubectl-create","operation":"Update","time":"2025-01-01T00:00:00Z"},{"apiVersion":"kopf.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:kopf.zalando.org/last-handled-configuration":{}},"f:finalizers":{".":{},"v:\"kopf.zalando.org/KopfFinalizerMarker\"":{}}},"f:status":{".":{},"f:create_fn":{".":{},"f:message":{}}}},"manager":"kopf","operation":"Update","time":"2025-01-01T00:00:01Z"}],`
	}
	return `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"{\"spec\":{\"duration\":\"1m\",\"field\":\"value\",\"items\":[\"item1\",\"item2\"]},\"metadata\":{\"labels\":{\"somelabel\":\"somevalue\"},\"annotations\":{\"someannotation\":\"somevalue\"}}}\n","someannotation":"somevalue"},"creationTimestamp":"2025-01-01T00:00:00Z","finalizers":["kopf.zalando.org/KopfFinalizerMarker"],"generation":1,"labels":{"somelabel":"somevalue"},` + managedFields +
		`"name":"` + name + `","namespace":"default","resourceVersion":"` + rv + `","uid":"6f1c3c4e-8a8e-4d7e-9f3e-0c8b5a6d7e8f"},"spec":{"duration":"1m","field":"value","items":["item1","item2"],"replicas":3,"ratio":0.5},"status":{"create_fn":{"message":"created"}}}`
}

// clientGoNegotiator is how client-go's dynamic client picks its decoders.
func clientGoNegotiator() runtime.ClientNegotiator {
	return runtime.NewClientNegotiator(dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer, schema.GroupVersion{})
}

// clientGoWatchDecoder is the dynamic client's decoder of a watch response.
func clientGoWatchDecoder(tb testing.TB, body io.ReadCloser) watch.Decoder {
	tb.Helper()
	objects, events, framer, err := clientGoNegotiator().StreamDecoder("application/json", nil)
	if err != nil {
		tb.Fatal(err)
	}
	return restclientwatch.NewDecoder(streaming.NewDecoder(framer.NewFrameReader(body), events), objects)
}

// clientGoList decodes a list as the dynamic client's List does.
func clientGoList(tb testing.TB, data []byte) (*unstructured.UnstructuredList, error) {
	tb.Helper()
	dec, err := clientGoNegotiator().Decoder("application/json", nil)
	if err != nil {
		tb.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	_, _, err = dec.Decode(data, nil, list)
	return list, err
}

type decoded struct {
	typ watch.EventType
	obj runtime.Object
}

func decodeAll(d watch.Decoder) ([]decoded, error) {
	defer d.Close()
	var events []decoded
	for {
		typ, obj, err := d.Decode()
		if err != nil {
			if err == io.EOF {
				return events, nil
			}
			return events, err
		}
		events = append(events, decoded{typ, obj})
	}
}

// withoutManagedFields is what the watcher delivers of client-go's objects.
func withoutManagedFields(events []decoded) []decoded {
	for _, ev := range events {
		_, _ = stripManagedFields(ev.obj)
	}
	return events
}

func frame(typ, obj string) string { return `{"type":"` + typ + `","object":` + obj + "}\n" }

// Every kind of event decodes to what client-go's dynamic client decodes,
// less managedFields.
func TestEventsMatchClientGo(t *testing.T) {
	tests := []struct {
		name   string
		stream string
	}{
		{"added", frame("ADDED", kopfExample("a", "1"))},
		{"modified and deleted", frame("MODIFIED", kopfExample("a", "2")) + frame("DELETED", kopfExample("a", "3"))},
		{"bookmark", frame("BOOKMARK", `{"kind":"KopfExample","apiVersion":"kopf.dev/v1","metadata":{"resourceVersion":"12345","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}`)},
		{"expired", frame("ERROR", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}`)},
		{"gone", frame("ERROR", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided watch is too old.","reason":"Gone","code":410,"details":{"causes":[{"reason":"x","message":"y"}],"retryAfterSeconds":1}}`)},
		{"numbers", frame("ADDED", `{"apiVersion":"v1","kind":"X","metadata":{"name":"n"},"spec":{"int":42,"neg":-7,"float":1.5,"exp":1e3,"big":123456789012345678901234567890,"max":9223372036854775807,"zero":0.0}}`)},
		{"strings", frame("ADDED", `{"apiVersion":"v1","kind":"X","metadata":{"name":"\u00e9t\u00e9"},"data":{"s":"a\"b\\c\nd\u2028\ud83d\ude00 日本"}}`)},
		{"key order and unknown keys", `{"object":` + kopfExample("a", "1") + `,"extra":[1,{"x":null}],"type":"ADDED"}`},
		{"whitespace between frames", "\n\n  " + frame("ADDED", kopfExample("a", "1")) + "\r\n\t" + frame("ADDED", kopfExample("b", "1")) + "   "},
		{"no newline between frames", strings.TrimSpace(frame("ADDED", kopfExample("a", "1"))) + strings.TrimSpace(frame("ADDED", kopfExample("b", "1")))},
		{"built-in", frame("ADDED", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default","managedFields":[]},"data":{"k":"v"}}`)},
		{"no managedFields", frame("ADDED", `{"kind":"X","apiVersion":"v1","metadata":{"name":"x"}}`)},
		{"null metadata", frame("ADDED", `{"kind":"X","apiVersion":"v1","metadata":null}`)},
		{"managedFields read token by token", frame("ADDED", `{"kind":"X","apiVersion":"v1","metadata":{"name":"x","managedFields":[{"fieldsV1":{"k:{\"uid\":\"4e5f\"}":{}},"n":[1e3,-2.5E-1,0]}]}}`)},
		{"duplicate names", frame("ADDED", `{"kind":"X","apiVersion":"v1","metadata":{"name":"x","name":"y"},"spec":{"a":1,"a":{"b":2}}}`)},
		{"invalid UTF-8", frame("ADDED", "{\"kind\":\"X\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"},\"data\":{\"a\xff\":\"b\xc3\",\"s\":\"\\ud83d\\u0041\"}}")},
		// Found by FuzzEvents: of duplicate "object"s, the last that is not null counts.
		{"duplicate object, the first not an object", `{"type":"ADDED","object":"","object":[1,{}],"object":{"apiVersion":"v1","kind":"X"}}`},
		{"duplicate object, the last null", `{"type":"ADDED","object":{"apiVersion":"v1","kind":"X","metadata":{"name":"x"}},"object":null}`},
		{"error, object before type", `{"object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410},"type":"ERROR"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := decodeAll(clientGoWatchDecoder(t, io.NopCloser(strings.NewReader(tt.stream))))
			if err != nil {
				t.Fatalf("client-go: %v", err)
			}
			got, err := decodeAll(newEventDecoder(io.NopCloser(iotest.HalfReader(strings.NewReader(tt.stream)))))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, withoutManagedFields(want)) {
				t.Errorf("decoded\n%#v\nclient-go decoded\n%#v", got, want)
			}
			for _, ev := range got {
				if u, ok := ev.obj.(*unstructured.Unstructured); ok {
					if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields"); found {
						t.Errorf("managedFields are decoded: %v", u.Object)
					}
				}
			}
		})
	}
}

// The object of an ERROR event is a Status that the reflector recognises.
func TestErrorEventIsStatus(t *testing.T) {
	stream := frame("ERROR", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}`)
	events, err := decodeAll(newEventDecoder(io.NopCloser(strings.NewReader(stream))))
	if err != nil || len(events) != 1 || events[0].typ != watch.Error {
		t.Fatalf("decoded %v, %v", events, err)
	}
	err = apierrors.FromObject(events[0].obj)
	if !apierrors.IsResourceExpired(err) {
		t.Errorf("%v (%T) is not an expiry", err, events[0].obj)
	}
}

// Malformed frames are errors, never panics; client-go fails on them too.
func TestMalformedEvents(t *testing.T) {
	tests := []struct {
		name   string
		stream string
	}{
		{"not JSON", "hello"},
		{"not an object", `[1,2]`},
		{"a string", `"ADDED"`},
		{"a stray closing brace", `}`},
		{"truncated", `{"type":"ADDED","object":{"kind":"X"`},
		{"bad literal", `{"type":"ADDED","object":{"kind":"X","apiVersion":"v1","a":tru}}`},
		{"bad number", `{"type":"ADDED","object":{"kind":"X","apiVersion":"v1","a":01}}`},
		{"overflowing number", `{"type":"ADDED","object":{"kind":"X","apiVersion":"v1","a":1e999}}`},
		{"bad managedFields", `{"type":"ADDED","object":{"kind":"X","apiVersion":"v1","metadata":{"managedFields":[,]}}}`},
		{"control character", "{\"type\":\"ADDED\",\"object\":{\"kind\":\"X\",\"apiVersion\":\"v1\",\"a\":\"\x01\"}}"},
		{"mismatched brackets", `{"type":"ADDED","object":{"kind":"X","apiVersion":"v1","a":[}]}`},
		{"unknown type", frame("CREATED", kopfExample("a", "1"))},
		{"type in another case", `{"Type":"ADDED","object":` + kopfExample("a", "1") + `}`},
		{"type not a string", `{"type":1,"object":` + kopfExample("a", "1") + `}`},
		{"no type", `{"object":` + kopfExample("a", "1") + `}`},
		{"no object", `{"type":"ADDED"}`},
		{"null object", `{"type":"ADDED","object":null}`},
		{"object not an object", `{"type":"ADDED","object":[]}`},
		{"no kind", frame("ADDED", `{"apiVersion":"v1","metadata":{"name":"a"}}`)},
		{"no apiVersion", frame("ADDED", `{"kind":"X","metadata":{"name":"a"}}`)},
		{"kind not a string", frame("ADDED", `{"apiVersion":"v1","kind":1}`)},
		{"bad apiVersion", frame("ADDED", `{"apiVersion":"a/b/c","kind":"X"}`)},
		{"trailing garbage", `{"type":"ADDED","object":` + kopfExample("a", "1") + `}x`},
		{"ERROR without an object", `{"type":"ERROR"}`},
		{"ERROR with a bad status", frame("ERROR", `{"kind":"Status","apiVersion":"v1","code":"410"}`)},
		{"deep", frame("ADDED", `{"kind":"X","apiVersion":"v1","a":`+strings.Repeat("[", 10001)+strings.Repeat("]", 10001)+`}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := decodeAll(clientGoWatchDecoder(t, io.NopCloser(strings.NewReader(tt.stream)))); err == nil {
				t.Errorf("client-go decodes it")
			}
			if _, err := decodeAll(newEventDecoder(io.NopCloser(strings.NewReader(tt.stream)))); err == nil {
				t.Errorf("no error")
			}
		})
	}
}

// A malformed frame ends the watch with an ERROR event carrying a Status,
// as in client-go: the reflector logs it and watches again.
func TestMalformedEventEndsWatch(t *testing.T) {
	stream := frame("ADDED", kopfExample("a", "1")) + `{"type":"ADDED","object":{"kind":"X",,}}` + frame("ADDED", kopfExample("b", "1"))
	w := watch.NewStreamWatcher(newEventDecoder(io.NopCloser(strings.NewReader(stream))), apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding"))
	var types []watch.EventType
	for ev := range w.ResultChan() {
		types = append(types, ev.Type)
		if ev.Type == watch.Error {
			if status, ok := ev.Object.(*metav1.Status); !ok || status.Code != 500 {
				t.Errorf("the error is %#v", ev.Object)
			}
		}
	}
	if !reflect.DeepEqual(types, []watch.EventType{watch.Added, watch.Error}) {
		t.Errorf("events: %v", types)
	}
}

// The decoder reads events straight from the body: it ends cleanly between
// events and not within one, returns the body's errors as they are, grows
// for large events and gives back its large buffer after them.
func TestEventStream(t *testing.T) {
	ev := func(name string) string {
		return frame("ADDED", `{"kind":"X","apiVersion":"v1","metadata":{"name":"`+name+`"}}`)
	}
	// Over maxIdleBuffer, with what a brace counter would miscount.
	big := frame("ADDED", `{"kind":"X","apiVersion":"v1","metadata":{"name":"big"},"data":{"s":"`+strings.Repeat(`x\"{[`, 300000)+`"}}`)
	readErr := errors.New("connection reset by peer")
	tests := []struct {
		name    string
		reader  io.Reader
		want    []string
		wantErr error
	}{
		{"empty", strings.NewReader(""), nil, io.EOF},
		{"whitespace", strings.NewReader(" \n\t"), nil, io.EOF},
		{"two", strings.NewReader(" " + ev("a") + "\t" + ev("b")), []string{"a", "b"}, io.EOF},
		{"byte by byte", iotest.OneByteReader(strings.NewReader(ev("a") + ev("b"))), []string{"a", "b"}, io.EOF},
		{"truncated", strings.NewReader(ev("a") + `{"type":"ADDED","object":`), []string{"a"}, io.ErrUnexpectedEOF},
		{"truncated string", strings.NewReader(`{"type":"ADD`), nil, io.ErrUnexpectedEOF},
		{"read error", io.MultiReader(strings.NewReader(ev("a")+`{"type"`), iotest.ErrReader(readErr)), []string{"a"}, readErr},
		{"read error between events", io.MultiReader(strings.NewReader(ev("a")), iotest.ErrReader(readErr)), []string{"a"}, readErr},
		{"large", strings.NewReader(big + big + ev("c")), []string{"big", "big", "c"}, io.EOF},
		{"large, half reads", iotest.HalfReader(strings.NewReader(ev("a") + big + ev("c"))), []string{"a", "big", "c"}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newEventDecoder(io.NopCloser(tt.reader))
			var got []string
			for {
				_, obj, err := d.Decode()
				if err != nil {
					if err != tt.wantErr { // as they are: the stream watcher compares them
						t.Errorf("error %v, want %v", err, tt.wantErr)
					}
					break
				}
				got = append(got, obj.(*unstructured.Unstructured).GetName())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events %q, want %q", got, tt.want)
			}
		})
	}
}

// An event is returned as soon as its closing brace arrives, without
// waiting for the next one (a watch stream is idle between events).
func TestEventBeforeTheNextArrives(t *testing.T) {
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	go func() {
		_, _ = io.WriteString(w, frame("ADDED", `{"kind":"X","apiVersion":"v1","metadata":{"name":"a"}}`))
	}()
	d := newEventDecoder(r)
	t.Cleanup(d.Close)
	type result struct {
		obj runtime.Object
		err error
	}
	done := make(chan result, 1)
	go func() {
		_, obj, err := d.Decode()
		done <- result{obj, err}
	}()
	select {
	case res := <-done:
		if res.err != nil || res.obj.(*unstructured.Unstructured).GetName() != "a" {
			t.Errorf("decoded %v, %v", res.obj, res.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event is not decoded until the stream goes on")
	}
}

func TestEventTooLarge(t *testing.T) {
	d := newEventDecoder(io.NopCloser(io.MultiReader(strings.NewReader(`{"type":"ADDED","object":{"a":"`), neverEnding('x'))))
	if _, _, err := d.Decode(); !errors.Is(err, errEventTooLarge) {
		t.Errorf("error %v", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func list(items ...string) string {
	return `{"apiVersion":"kopf.dev/v1","kind":"KopfExampleList","metadata":{"resourceVersion":"42","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDIsInN0YXJ0IjoiYiJ9","remainingItemCount":998},"items":[` + strings.Join(items, ",") + `]}`
}

// Lists decode to what client-go's dynamic client decodes, less
// managedFields, with their paging metadata.
func TestListsMatchClientGo(t *testing.T) {
	tests := []struct {
		name string
		json string
	}{
		{"page", list(kopfExample("a", "1"), kopfExample("b", "2"))},
		{"empty", list()},
		{"null items", `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":null}`},
		{"no items", `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"7"}}`},
		{"built-in items without kind", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"data":{"n":"1"}},{"kind":"Other","metadata":{"name":"b"}}]}`},
		{"items before kind", `{"items":[{"metadata":{"name":"a"}}],"kind":"ConfigMapList","apiVersion":"v1"}`},
		{"null item", `{"kind":"ConfigMapList","apiVersion":"v1","items":[null]}`},
		{"numbers", `{"kind":"XList","apiVersion":"v1","items":[{"kind":"X","apiVersion":"v1","n":[1,-1,1.5,1e2,99999999999999999999]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := clientGoList(t, []byte(tt.json))
			if err != nil {
				t.Fatalf("client-go: %v", err)
			}
			for i := range want.Items {
				_, _ = stripManagedFields(&want.Items[i])
			}
			got, err := decodeList([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded\n%#v\nclient-go decoded\n%#v", got, want)
			}
		})
	}
}

func TestListPaging(t *testing.T) {
	got, err := decodeList([]byte(list(kopfExample("a", "1"))))
	if err != nil {
		t.Fatal(err)
	}
	if got.GetResourceVersion() != "42" || got.GetContinue() == "" || got.GetRemainingItemCount() == nil || *got.GetRemainingItemCount() != 998 {
		t.Errorf("list metadata: %v", got.Object)
	}
	if len(got.Items) != 1 || got.Items[0].GetName() != "a" || got.Items[0].GetManagedFields() != nil {
		t.Errorf("items: %v", got.Items)
	}
}

func TestMalformedLists(t *testing.T) {
	for _, data := range []string{
		``, `[]`, `{`, `{"kind":"XList","apiVersion":"v1","items":[}`, `{"kind":"XList","apiVersion":"v1","items":{}}`,
		`{"kind":"XList","apiVersion":"v1","items":[1]}`, `{"kind":"XList","apiVersion":"v1","items":[[]]}`,
		`{"apiVersion":"v1","items":[]}`, `{"kind":"XList","apiVersion":"v1","items":[]} {}`, `{"kind":5,"items":[]}`,
		`{"kind":"XList","apiVersion":"v1","items":[{"metadata":{"managedFields":[1e999]}}]}`,
	} {
		if _, err := clientGoList(t, []byte(data)); err == nil {
			t.Errorf("%s: client-go decodes it", data)
		}
		if _, err := decodeList([]byte(data)); err == nil {
			t.Errorf("%s: no error", data)
		}
	}
}

// watchStream is n events of KopfExamples.
func watchStream(n int, managed bool) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(frame("MODIFIED", kopfExampleObject(fmt.Sprintf("kopf-example-%d", i), fmt.Sprint(1000+i), managed)))
	}
	return b.Bytes()
}

// The decoders of a watch stream of 1,000 events, ours and client-go's
// (the dynamic client's, and then managedFields stripped as the watcher
// does), for objects with managedFields (1.4 KB, as the API server sends
// them after two writers) and without (0.7 KB).
func BenchmarkWatchDecoding(b *testing.B) {
	const n = 1000
	decoders := []struct {
		name string
		new  func(io.ReadCloser) watch.Decoder
	}{
		{"client-go", func(r io.ReadCloser) watch.Decoder { return clientGoWatchDecoder(b, r) }},
		{"kopf", func(r io.ReadCloser) watch.Decoder { return newEventDecoder(r) }},
	}
	for _, managed := range []bool{true, false} {
		stream := watchStream(n, managed)
		for _, d := range decoders {
			b.Run(fmt.Sprintf("managedFields=%t/%s", managed, d.name), func(b *testing.B) {
				b.SetBytes(int64(len(stream)))
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					dec := d.new(io.NopCloser(bytes.NewReader(stream)))
					for range n {
						_, obj, err := dec.Decode()
						if err != nil {
							b.Fatal(err)
						}
						_, _ = stripManagedFields(obj)
					}
					dec.Close()
				}
			})
		}
	}
}

// The decoders of a list of 1,000 KopfExamples.
func BenchmarkListDecoding(b *testing.B) {
	items := make([]string, 1000)
	for i := range items {
		items[i] = kopfExample(fmt.Sprintf("kopf-example-%d", i), fmt.Sprint(1000+i))
	}
	data := []byte(list(items...))
	b.Run("client-go", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			l, err := clientGoList(b, data)
			if err != nil {
				b.Fatal(err)
			}
			for i := range l.Items {
				_, _ = stripManagedFields(&l.Items[i])
			}
		}
	})
	b.Run("kopf", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := decodeList(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
