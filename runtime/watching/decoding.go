package watching

import (
	"bytes"
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
// one parse per LIST response, and one framing scan and one parse per watch
// event, instead of client-go's framing, meta-interpretation, WatchEvent
// decoding, re-interpretation and unstructured decoding of the embedded
// object. They also skip metadata.managedFields instead of building and
// then dropping them.
//
// What they do not reproduce: client-go's typed decoding of the kinds of
// its own scheme (Status, WatchEvent, the option kinds, in v1), which no
// watchable resource has, and the wording of its errors.

// decodeList decodes a LIST response as client-go's unstructured decoding
// does: items without apiVersion and kind (as the API server sends those of
// built-in resources) get the list's, less its "List" suffix.
func decodeList(data []byte) (*unstructured.UnstructuredList, error) {
	p := newParser()
	p.reset(data)
	if p.peek() != '{' {
		return nil, p.unexpected("looking for beginning of a list")
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++
	list := &unstructured.UnstructuredList{Object: map[string]any{}}
	var items []unstructured.Unstructured
	for first := true; ; first = false {
		p.ws()
		if first && p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			break
		}
		key, err := p.objectKey()
		if err != nil {
			return nil, err
		}
		if key == "items" {
			items, err = p.listItems()
		} else {
			list.Object[key], err = p.value()
		}
		if err != nil {
			return nil, err
		}
		if done, err := p.objectNext(); err != nil {
			return nil, err
		} else if done {
			break
		}
	}
	if err := p.end(); err != nil {
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

// listItems parses the items of a list: an array of objects, or null.
func (p *parser) listItems() ([]unstructured.Unstructured, error) {
	switch p.peek() {
	case 'n':
		return nil, p.literal("null")
	case '[':
	default:
		return nil, p.unexpected("looking for the items of a list")
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++
	items := []unstructured.Unstructured{}
	if p.peek() == ']' {
		p.pos++
		p.depth--
		return items, nil
	}
	for {
		var obj map[string]any
		switch p.peek() {
		case '{':
			var err error
			if obj, err = p.object(resourceObject); err != nil {
				return nil, err
			}
		case 'n': // client-go decodes a null item into an empty object
			if err := p.literal("null"); err != nil {
				return nil, err
			}
			obj = map[string]any{}
		default:
			return nil, p.unexpected("looking for an item of a list")
		}
		items = append(items, unstructured.Unstructured{Object: obj})
		if done, err := p.arrayNext(); err != nil {
			return nil, err
		} else if done {
			return items, nil
		}
	}
}

// event decodes one watch event, {"type": ..., "object": {...}}, as
// client-go's watch decoder does: the object of an ERROR event into a
// *metav1.Status, the others into *unstructured.Unstructured with
// apiVersion and kind required.
func (p *parser) event(data []byte) (watch.EventType, runtime.Object, error) {
	p.reset(data)
	if p.peek() != '{' {
		return "", nil, p.unexpected("looking for beginning of a watch event")
	}
	if err := p.enter(); err != nil {
		return "", nil, err
	}
	p.pos++
	var (
		typ string
		obj map[string]any
		raw []byte
	)
	for first := true; ; first = false {
		p.ws()
		if first && p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			break
		}
		key, err := p.objectKey()
		if err != nil {
			return "", nil, err
		}
		switch key {
		case "type":
			switch p.peek() {
			case '"':
				typ, err = p.key() // interned: there are five
			case 'n':
				err = p.literal("null")
			default:
				err = p.unexpected("looking for the type of a watch event")
			}
		case "object":
			switch p.peek() {
			case '{':
				start := p.pos
				obj, err = p.object(resourceObject)
				raw = p.data[start:p.pos]
			case 'n':
				obj, raw, err = nil, nil, p.literal("null")
			default:
				err = p.unexpected("looking for the object of a watch event")
			}
		default:
			err = p.skip()
		}
		if err != nil {
			return "", nil, err
		}
		if done, err := p.objectNext(); err != nil {
			return "", nil, err
		} else if done {
			break
		}
	}
	if err := p.end(); err != nil {
		return "", nil, err
	}
	switch t := watch.EventType(typ); t {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		if obj == nil {
			return "", nil, fmt.Errorf("a watch event of type %s without an object", t)
		}
		gvk, err := typeMeta(obj)
		if err != nil {
			return "", nil, err
		}
		if gvk.Kind == "" {
			return "", nil, runtime.NewMissingKindErr(abbreviate(raw))
		}
		if gvk.Version == "" {
			return "", nil, runtime.NewMissingVersionErr(abbreviate(raw))
		}
		return t, &unstructured.Unstructured{Object: obj}, nil
	case watch.Error:
		if obj == nil {
			return "", nil, errors.New("a watch event of type ERROR without an object")
		}
		status := &metav1.Status{}
		if err := utiljson.Unmarshal(raw, status); err != nil {
			return "", nil, fmt.Errorf("decoding the status of an ERROR watch event: %w", err)
		}
		return t, status, nil
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %v", typ)
	}
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

// frameReader splits a watch response, a stream of JSON objects, into
// frames: it finds where each top-level object ends by counting braces and
// brackets outside strings, and leaves the checking to the parser.
type frameReader struct {
	r          io.Reader
	buf        []byte
	start, end int   // buf[start:end] is read and not yet returned
	err        error // the reader's error, returned once no frame is left
}

const (
	initialFrameBuffer = 16 << 10
	// maxIdleFrameBuffer: a buffer grown beyond this for a large object is
	// dropped once that object is decoded.
	maxIdleFrameBuffer = 1 << 20
	// maxFrameSize is client-go's limit of a watch event's size.
	maxFrameSize = 16 << 20
)

// errFrameTooLarge is a watch event over maxFrameSize.
var errFrameTooLarge = fmt.Errorf("a watch event is larger than %d bytes", maxFrameSize)

// next returns the next frame, valid until the following call; io.EOF if
// the stream ends between frames, io.ErrUnexpectedEOF within one, and the
// reader's other errors as they are (the stream watcher tells them apart).
func (f *frameReader) next() ([]byte, error) {
	if f.start == f.end {
		f.start, f.end = 0, 0
		if len(f.buf) > maxIdleFrameBuffer {
			f.buf = nil
		}
	}
	if f.buf == nil {
		f.buf = make([]byte, initialFrameBuffer)
	}
	var (
		i        = f.start // the next byte to scan
		depth    int
		inString bool
	)
	for {
		for ; i < f.end; i++ {
			if inString { // to the next quote not escaped by an odd number of backslashes
				q := bytes.IndexByte(f.buf[i:f.end], '"')
				if q < 0 {
					i = f.end - 1
					continue
				}
				i += q
				k := i // the opening quote stops this
				for f.buf[k-1] == '\\' {
					k--
				}
				inString = (i-k)%2 == 1
				continue
			}
			c := f.buf[i]
			switch c {
			case '{':
				depth++
			case '[':
				if depth == 0 {
					return nil, f.malformed(i)
				}
				depth++
			case '}', ']':
				if depth == 0 {
					return nil, f.malformed(i)
				}
				depth--
				if depth == 0 {
					frame := f.buf[f.start : i+1]
					f.start = i + 1
					return frame, nil
				}
			case ' ', '\t', '\r', '\n':
				if depth == 0 {
					f.start = i + 1
				}
			case '"':
				if depth == 0 {
					return nil, f.malformed(i)
				}
				inString = true
			default:
				if depth == 0 {
					return nil, f.malformed(i)
				}
			}
		}
		if f.err != nil {
			if f.err == io.EOF && f.start < f.end {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, f.err
		}
		if f.end == len(f.buf) { // full: make room
			if f.start > 0 {
				n := copy(f.buf, f.buf[f.start:f.end])
				i -= f.start
				f.start, f.end = 0, n
			} else {
				if len(f.buf) >= maxFrameSize {
					return nil, errFrameTooLarge
				}
				grown := make([]byte, min(2*len(f.buf), maxFrameSize))
				copy(grown, f.buf[:f.end])
				f.buf = grown
			}
		}
		n, err := f.r.Read(f.buf[f.end:])
		f.end += n
		f.err = err
	}
}

// malformed reports a stream that does not continue with an object at i.
func (f *frameReader) malformed(i int) error {
	f.start = i
	return fmt.Errorf("invalid character %q looking for beginning of a watch event", f.buf[i])
}

// eventDecoder is a watch.Decoder of a watch response.
type eventDecoder struct {
	body   io.ReadCloser
	frames frameReader
	parser *parser
}

func newEventDecoder(body io.ReadCloser) *eventDecoder {
	return &eventDecoder{body: body, frames: frameReader{r: body}, parser: newParser()}
}

// Decode returns the next event. It is called by one goroutine at a time.
func (d *eventDecoder) Decode() (watch.EventType, runtime.Object, error) {
	frame, err := d.frames.next()
	if err != nil {
		return "", nil, err
	}
	return d.parser.event(frame)
}

// Close closes the response body, which ends a Decode that is waiting for
// it. It may be called while Decode runs.
func (d *eventDecoder) Close() { _ = d.body.Close() }
