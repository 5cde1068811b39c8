package fetch

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinels for errors.Is. A failed Fetch returns an *Error, which matches
// ErrAllFailed and, through its attempts, every sentinel that applies to one of
// them (so errors.Is(err, ErrMismatch) says "some source served wrong bytes").
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
	Name     string    // file name, e.g. openssl-4.0.2.tar.gz
	Offline  bool      // offline mode was on
	Skipped  int       // network sources not tried because of offline mode
	Cache    error     // a corrupted cache entry that was removed first, if any
	Attempts []Attempt // sources tried, in order
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
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

// Unwrap lets errors.Is/As see the sentinels and every attempt's error.
func (e *Error) Unwrap() []error {
	errs := []error{ErrAllFailed}
	if e.Offline {
		errs = append(errs, ErrOffline)
	}
	for _, a := range e.Attempts {
		errs = append(errs, a.Err)
	}
	return errs
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

// transferError is a network failure: refused, reset, timed out, stalled or
// cut short. These are worth retrying.
type transferError struct {
	what  string // "connect", "timeout", "stalled", "connection lost"
	got   int64  // body bytes received before it happened (-1: before the body)
	total int64  // expected bytes (-1: unknown)
	idle  time.Duration
	err   error
}

func (e *transferError) Error() string {
	var b strings.Builder
	switch e.what {
	case "stalled":
		fmt.Fprintf(&b, "stalled: no data for %v", e.idle)
	default:
		fmt.Fprintf(&b, "%s: %v", e.what, e.err)
	}
	if e.got >= 0 {
		if e.total >= 0 {
			fmt.Fprintf(&b, " (after %d of %d bytes)", e.got, e.total)
		} else {
			fmt.Fprintf(&b, " (after %d bytes)", e.got)
		}
	}
	return b.String()
}

func (e *transferError) Unwrap() error { return e.err }

// errStalled is the cause given to a request's context when its body stalls.
var errStalled = errors.New("body stalled")

// permanentError marks a failure that retrying the same URL cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// retryable reports whether another request to the same URL might succeed:
// network trouble and 5xx yes; 4xx, wrong bytes and local errors no. A
// permanentError wins over what it wraps: a caller's verdict on a download
// (Discovery.Accept) may quote a network error that retrying will not fix.
func retryable(err error) bool {
	var pe *permanentError
	var se *statusError
	var te *transferError
	switch {
	case errors.As(err, &pe):
		return false
	case errors.As(err, &se):
		return se.code >= 500
	case errors.As(err, &te):
		return true
	}
	return false
}
