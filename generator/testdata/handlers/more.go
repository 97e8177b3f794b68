package handlers

import "context"

// Later lives in a later file, so it is registered last.
//
//kopf:on.create kopfexamples id=later backoff=1h
func Later(_ context.Context, _ LaterKwargs) (result any, err error) {
	return nil, nil
}
