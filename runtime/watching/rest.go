package watching

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// The requests are those of client-go's dynamic client: the same path, the
// ListOptions as the same query parameters, JSON asked for (even if the
// client's config would accept CBOR, which these decoders do not read),
// and the shard selector, if not "", as its parameter (see shards.go).

func request(c rest.Interface, path string, opts *metav1.ListOptions, shard string) *rest.Request {
	r := c.Get().AbsPath(path).
		SpecificallyVersionedParams(opts, metav1.ParameterCodec, metav1.SchemeGroupVersion)
	if shard != "" {
		r = r.Param(shardSelectorParam, shard)
	}
	return r.SetHeader("Accept", "application/json")
}

// listREST lists a collection: one page if opts has a limit.
func listREST(ctx context.Context, c rest.Interface, path string, opts metav1.ListOptions, shard string) (runtime.Object, error) {
	res := request(c, path, &opts, shard).Do(ctx)
	if err := res.Error(); err != nil { // Error, not Raw: it decodes the API's Status
		return nil, err
	}
	raw, _ := res.Raw()
	list, err := decodeList(raw)
	if err != nil {
		return nil, fmt.Errorf("decoding the list of %s: %w", path, err)
	}
	return list, nil
}

// watchREST watches a collection. The stream ends when ctx is done, when
// the server ends it, or at the first event that cannot be decoded (which
// comes as an ERROR event with an internal-error Status, as in client-go).
//
// track, if set, wraps the decoder (see trackDecoder) once the stream is
// open.
func watchREST(ctx context.Context, c rest.Interface, path string, opts metav1.ListOptions, shard string, track func(watch.Decoder) watch.Decoder) (watch.Interface, error) {
	opts.Watch = true
	// Not rate-limited, as client-go's watches are not: a watch is one
	// long request, and renewing it must not wait behind the patches.
	body, err := request(c, path, &opts, shard).Throttle(nil).Stream(ctx)
	if err != nil {
		// As client-go's Request.Watch: a connection lost before the
		// response is an empty watch, which the reflector renews.
		if utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) {
			return watch.NewEmptyWatch(), nil
		}
		return nil, err
	}
	var dec watch.Decoder = newEventDecoder(body)
	if track != nil {
		dec = track(dec)
	}
	return watch.NewStreamWatcher(
		dec,
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding"),
	), nil
}
