package fetch

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinels for errors.Is. A failed Fetch returns an *Error, which matches
// ErrAllFailed and, through its attempts and the cache entry it removed,
// every sentinel that applies to one of them (so errors.Is(err, ErrMismatch)
// says "some source, or the cache, held wrong bytes").
var (
	// ErrAllFailed: no source produced the file (including "none to try").
	ErrAllFailed = errors.New("all sources failed")
	// ErrMismatch: a source served bytes whose size or sha256 is not the pinned one.
	ErrMismatch = errors.New("content mismatch")
	// ErrNotFound: a source answered 404/410, or a mirror has no such file.
	ErrNotFound = errors.New("not found")
	// ErrOffline: offline mode, and neither the cache nor a local mirror has the file.
	ErrOffline = errors.New("not available offline")
	// ErrTooLarge: an unpinned file (a signature, a discovered file) bigger
	// than its bound.
	ErrTooLarge = errors.New("too large")
	// ErrDeadline: the deadline for one file (Options.Deadline) passed.
	ErrDeadline = errors.New("deadline passed")
	// ErrTooSlow: a transfer fell below Options.MinRate.
	ErrTooSlow = errors.New("transfer too slow")
	// ErrRejected: the caller's check refused what a source served (a
	// signature that does not verify).
	ErrRejected = errors.New("rejected")
)

// Attempt is one source that was tried and failed.
type Attempt struct {
	URL   string // the source, as a URL (a directory mirror appears as file://)
	Tries int    // requests made to it, retries included
	Err   error  // what happened on the last try
}

// Error is the one error a failed fetch returns: every source, in the order
// tried, with what went wrong at each.
type Error struct {
	Name    string // file name, e.g. openssl-4.0.2.tar.gz
	Offline bool   // offline mode was on
	Skipped int    // network sources not tried because of offline mode
	// Cache is a cache entry that failed verification and was removed before
	// the sources were tried, if any: the culprit when every source was fine
	// but unreachable.
	Cache    error
	Attempts []Attempt // sources tried, in order
	// Deadline is set when the deadline for the file ended the fetch; the
	// last attempt is the one it interrupted, and Untried sources came after.
	Deadline time.Duration
	Untried  int
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Deadline > 0:
		n := len(e.Attempts)
		fmt.Fprintf(&b, "fetch %s: deadline of %v passed after trying %d of %d %s:", e.Name, e.Deadline, n, n+e.Untried, plural(n+e.Untried, "source", "sources"))
	case e.Offline && len(e.Attempts) == 0:
		fmt.Fprintf(&b, "fetch %s: offline, not in the cache, and no local mirror to read it from", e.Name)
	case e.Offline:
		fmt.Fprintf(&b, "fetch %s: offline, not in the cache, and the local mirror failed:", e.Name)
	case len(e.Attempts) == 0:
		fmt.Fprintf(&b, "fetch %s: not in the cache, and no mirror or URL to fetch it from", e.Name)
	default:
		fmt.Fprintf(&b, "fetch %s: all %d %s failed:", e.Name, len(e.Attempts), plural(len(e.Attempts), "source", "sources"))
	}
	if e.Cache != nil {
		fmt.Fprintf(&b, "\n  cache: %v", e.Cache)
	}
	for _, a := range e.Attempts {
		fmt.Fprintf(&b, "\n  %s: %v", a.URL, a.Err)
		if a.Tries > 1 {
			fmt.Fprintf(&b, " (tried %d times)", a.Tries)
		}
	}
	if e.Skipped > 0 {
		fmt.Fprintf(&b, "\n  (%d network %s not tried: offline)", e.Skipped, plural(e.Skipped, "source", "sources"))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Unwrap lets errors.Is/As see the sentinels, the removed cache entry's
// error and every attempt's error.
func (e *Error) Unwrap() []error {
	errs := []error{ErrAllFailed}
	if e.Offline {
		errs = append(errs, ErrOffline)
	}
	if e.Cache != nil {
		errs = append(errs, e.Cache)
	}
	for _, a := range e.Attempts {
		errs = append(errs, a.Err)
	}
	return errs
}

// NotFoundAnywhere reports whether the file does not exist, as opposed to
// being unreachable or wrong: sources were tried and every one answered
// "not found", and no cache entry was removed. Only then may a caller treat
// an optional file (an old release's signature) as absent.
func (e *Error) NotFoundAnywhere() bool {
	if e.Cache != nil || e.Deadline > 0 || len(e.Attempts) == 0 {
		return false
	}
	for _, a := range e.Attempts {
		if !errors.Is(a.Err, ErrNotFound) {
			return false
		}
	}
	return true
}

// MismatchError says a source served something other than the pinned file.
type MismatchError struct {
	WantSHA256 string
	WantSize   int64
	GotSHA256  string // empty when reading stopped early (wrong or excess size)
	GotSize    int64  // bytes received, or the size the source declared
	Declared   bool   // GotSize is the source's declared size; the body was not read
	More       bool   // more than WantSize bytes arrived; reading stopped
	// ContentType and Head (the first bytes) help recognise an HTML error page.
	ContentType string
	Head        []byte
}

func (e *MismatchError) Error() string {
	var msg string
	switch {
	case e.More:
		msg = fmt.Sprintf("size mismatch: want %d bytes, got more (stopped after %d)", e.WantSize, e.GotSize)
	case e.Declared:
		msg = fmt.Sprintf("size mismatch: want %d bytes, source has %d", e.WantSize, e.GotSize)
	case e.GotSize != e.WantSize:
		msg = fmt.Sprintf("size mismatch: want %d bytes, got %d (sha256 %s)", e.WantSize, e.GotSize, e.GotSHA256)
	default:
		msg = fmt.Sprintf("sha256 mismatch: want %s, got %s (%d bytes)", e.WantSHA256, e.GotSHA256, e.GotSize)
	}
	return msg + describeContent(e.ContentType, e.Head)
}

// Is makes errors.Is(err, ErrMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// describeContent returns ", Content-Type ..." and, when the bytes look like
// an HTML page (the usual shape of a captive portal, rate-limit or error page
// served with 200), says so with the start of it.
func describeContent(contentType string, head []byte) string {
	var b strings.Builder
	if contentType != "" {
		fmt.Fprintf(&b, ", Content-Type %q", contentType)
	}
	if looksHTML(contentType, head) {
		start := strings.TrimSpace(string(head))
		if len(start) > 60 {
			start = start[:60] + "..."
		}
		fmt.Fprintf(&b, "; looks like an HTML page: %q", start)
	}
	return b.String()
}

func looksHTML(contentType string, head []byte) bool {
	ct := strings.ToLower(contentType)
	if strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/xhtml") {
		return true
	}
	s := strings.TrimLeft(string(head), " \t\r\n\ufeff")
	return strings.HasPrefix(s, "<")
}

// statusError is an HTTP response other than 200.
type statusError struct {
	code        int
	status      string // e.g. "404 Not Found"
	contentType string
}

func (e *statusError) Error() string {
	msg := "HTTP " + e.status
	if e.contentType != "" && e.code >= 500 {
		msg += fmt.Sprintf(" (Content-Type %q)", e.contentType)
	}
	return msg
}

func (e *statusError) Is(target error) bool {
	return target == ErrNotFound && (e.code == 404 || e.code == 410)
}

// transferError is a network failure: refused, reset, timed out, stalled,
// too slow or cut short (worth retrying), or one of the kinds netError marks
// permanent (DNS, certificate), or the deadline for the file.
type transferError struct {
	what  string // "connection error", "timeout", "connection lost", "stalled", "too slow", "deadline", ...
	got   int64  // body bytes received before it happened (-1: before the body)
	total int64  // expected bytes (-1: unknown)
	err   error
	last  error // deadline only: what the last try got, when the deadline passed between tries
}

func (e *transferError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v", e.what, e.err)
	switch {
	case e.last != nil:
		fmt.Fprintf(&b, " while waiting to retry (last try: %v)", e.last)
	case e.got >= 0 && e.total >= 0:
		fmt.Fprintf(&b, " (after %d of %d bytes)", e.got, e.total)
	case e.got >= 0:
		fmt.Fprintf(&b, " (after %d bytes)", e.got)
	case e.what == "deadline":
		b.WriteString(" (no response yet)")
	}
	return b.String()
}

func (e *transferError) Unwrap() []error {
	if e.last != nil {
		return []error{e.err, e.last}
	}
	return []error{e.err}
}

// Causes given to a transfer's context when one of fetch's own limits ends
// it; stopped turns them into transferErrors with the bytes received.
type (
	stalled          struct{ idle time.Duration }
	deadlineExceeded struct{ limit time.Duration }
	tooSlow          struct {
		got    int64 // bytes in the window
		window time.Duration
		min    int64 // bytes per second
	}
)

func (c *stalled) Error() string { return fmt.Sprintf("no data for %v", c.idle) }
func (c *deadlineExceeded) Error() string {
	return fmt.Sprintf("%v for the whole file passed", c.limit)
}
func (c *deadlineExceeded) Is(target error) bool { return target == ErrDeadline }
func (c *tooSlow) Error() string {
	return fmt.Sprintf("%d bytes in the last %v, below the minimum of %d bytes/s", c.got, c.window, c.min)
}
func (c *tooSlow) Is(target error) bool { return target == ErrTooSlow }

// rejectedError is a download the caller's check refused.
type rejectedError struct{ err error }

func (e *rejectedError) Error() string        { return e.err.Error() }
func (e *rejectedError) Unwrap() error        { return e.err }
func (e *rejectedError) Is(target error) bool { return target == ErrRejected }

// permanentError marks a failure that retrying the same URL cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// retryable reports whether another request to the same URL might succeed:
// network trouble (stalls and trickles included: the deadline bounds them)
// and 5xx yes; 4xx, wrong bytes, local errors and what netError marks
// permanent (DNS, certificates, redirect loops) no. A
// permanentError wins over what it wraps: a caller's verdict on a download
// (Discovery.Accept) may quote a network error that retrying will not fix.
func retryable(err error) bool {
	if _, ok := errors.AsType[*permanentError](err); ok {
		return false
	}
	if se, ok := errors.AsType[*statusError](err); ok {
		return se.code >= 500
	}
	_, ok := errors.AsType[*transferError](err)
	return ok
}
