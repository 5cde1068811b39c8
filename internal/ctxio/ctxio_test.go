package ctxio

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader("hello world"))
	b := make([]byte, 5)
	if n, err := r.Read(b); n != 5 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	cancel()
	if _, err := io.ReadAll(r); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
}
