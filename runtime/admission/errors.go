package admission

import (
	"fmt"
	"net/http"
)

// Error is what an admission webhook handler returns to refuse the request
// under admission with a message and an HTTP status code of its choice
// (Kopf's kopf.AdmissionError): the API server refuses the user's request
// with them ("admission webhook "<name>" denied the request: <message>").
// A zero Code means 500, as in Kopf. It counts when wrapped
// (fmt.Errorf("...: %w", err)).
//
// Any other error refuses the request too, with its text and code 500;
// when several handlers fail, the response carries an Error first, then
// a PermanentError, then a TemporaryError, then any other (Kopf's order).
type Error struct {
	Message string
	Code    int
}

// NewError returns an Error with the message and the code (0 means 500).
func NewError(message string, code int) *Error { return &Error{Message: message, Code: code} }

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// StatusCode returns the code, 500 if none is set.
func (e *Error) StatusCode() int {
	if e.Code == 0 {
		return http.StatusInternalServerError
	}
	return e.Code
}

// String describes the error for logs.
func (e *Error) String() string {
	return fmt.Sprintf("AdmissionError(%q, code=%d)", e.Message, e.StatusCode())
}
