package apply

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf/runtime/execution"
)

// ConflictError is an apply refused because other field managers own
// fields that it sets to other values (409 Conflict): Managers are
// their names, Fields the fields' paths, both as the API server lists
// them, sorted. It unwraps to the API server's error and, unless
// ConflictNotRetried, to a *execution.TemporaryError with the same
// message, so that the handler is retried.
type ConflictError struct {
	Target   Target
	Owner    string
	Managers []string
	Fields   []string
	Err      error
	retry    *execution.TemporaryError
}

func (e *ConflictError) Error() string {
	quoted := make([]string, len(e.Managers))
	for i, m := range e.Managers {
		quoted[i] = strconv.Quote(m)
	}
	return fmt.Sprintf("applying %s as %q: conflict with %s on %s (ForceOwnership takes these fields)",
		e.Target, e.Owner, strings.Join(quoted, ", "), strings.Join(e.Fields, ", "))
}

func (e *ConflictError) Unwrap() []error {
	if e.retry == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.retry}
}

// classify makes a conflict a *ConflictError and wraps any other error.
func classify(t Target, o options, err error) error {
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) {
		return fmt.Errorf("applying %s as %q: %w", t, o.fieldOwner, err)
	}
	ce := &ConflictError{Target: t, Owner: o.fieldOwner, Err: err}
	if d := status.Status().Details; d != nil {
		ce.Managers, ce.Fields = conflicts(d.Causes)
	}
	if len(ce.Managers) == 0 {
		return fmt.Errorf("applying %s as %q: %w", t, o.fieldOwner, err)
	}
	if !o.noRetry {
		ce.retry = &execution.TemporaryError{Message: ce.Error(), Delay: o.conflictDelay}
	}
	return ce
}

// conflicts reads the managers and fields of an apply conflict's causes,
// whose messages are `conflict with "manager"` and maybe more (` using
// apps/v1`, ` with subresource "status"`).
func conflicts(causes []metav1.StatusCause) (managers, fields []string) {
	for _, c := range causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		rest := strings.TrimPrefix(c.Message, "conflict with ")
		m := rest
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			m, _ = strconv.Unquote(q)
		}
		if !slices.Contains(managers, m) {
			managers = append(managers, m)
		}
		if c.Field != "" && !slices.Contains(fields, c.Field) {
			fields = append(fields, c.Field)
		}
	}
	slices.Sort(managers)
	slices.Sort(fields)
	return managers, fields
}
