// Package stacked is Kopf's decorators stacked on one function with one id
// and other options: @kopf.on.create(..., id='x', retries=3) over
// @kopf.on.update(..., id='x') over @kopf.on.resume(..., id='x',
// retries=3). They are registrations of that one id (one progress record,
// one status.x), tied to the function: the markers with equal options are
// merged (create and resume), the other (update) has its own.
package stacked

import "context"

// Fn is called once per cause, with the options of the cause's marker.
//
//kopf:on.create kopfexamples id=x retries=3
//kopf:on.update kopfexamples id=x
//kopf:on.resume kopfexamples id=x retries=3
func Fn(ctx context.Context, kw FnKwargs) error {
	return nil
}
