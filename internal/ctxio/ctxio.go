// Package ctxio makes long reads (hashing a 55 MB tarball, extracting it)
// stop when their context ends.
package ctxio

import (
	"context"
	"io"
)

// Reader returns r, failing with ctx's error once ctx is done.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
