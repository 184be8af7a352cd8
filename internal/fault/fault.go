// Package fault gives errors a kind and a sentence that is safe to show a
// person. Domain packages return them; the web layer maps the kind to an
// HTTP status and shows the sentence, and logs the wrapped cause once.
// Errors without a kind are internal: the person sees a generic sentence and
// the details go only to the log.
package fault

import (
	"errors"
	"fmt"
)

// Kind classifies an error for the person asking.
type Kind int

const (
	Internal         Kind = iota
	Invalid               // the request is wrong; the message says how to fix it
	NotFound              // nothing there, or nothing the asker may see
	Forbidden             // signed in, but not allowed
	Conflict              // the request clashes with the current state
	TooMany               // slow down
	TooLarge              // the body is over the limit
	Unauthorized          // sign in first
	MethodNotAllowed      // the path exists, the method does not
)

// Error is an error with a kind and a safe message.
type Error struct {
	Kind    Kind
	Field   string // the form field the message belongs beside, if any
	Message string // safe to show a person
	Err     error  // the cause, for the log; may be nil
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an Error of kind with message.
func New(kind Kind, message string) *Error { return &Error{Kind: kind, Message: message} }

// Newf is New with formatting.
func Newf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Field returns an Invalid error that belongs beside one form field.
func Field(field, message string) *Error {
	return &Error{Kind: Invalid, Field: field, Message: message}
}

// Wrap gives cause a kind and a safe message.
func Wrap(kind Kind, message string, cause error) *Error {
	return &Error{Kind: kind, Message: message, Err: cause}
}

// KindOf returns err's kind; Internal for an error without one.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// As returns err's *Error, if it has one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ErrNotFound is the sentinel a store returns when a row does not exist.
var ErrNotFound = New(NotFound, "Not found.")
