package testfixture

import (
	"testing"
	"time"
)

// TestBuildSlots: with OSSLBUILD_BUILD_SLOTS=2 two builds hold a slot at
// once and a third waits until one is released; without it, one slot.
func TestBuildSlots(t *testing.T) {
	for _, tt := range []struct {
		slots string
		n     int
	}{{"", 1}, {"2", 2}} {
		t.Run("slots="+tt.slots, func(t *testing.T) {
			t.Setenv("OSSLBUILD_E2E_DIR", t.TempDir())
			t.Setenv("OSSLBUILD_BUILD_SLOTS", tt.slots)
			var held []func()
			for range tt.n {
				held = append(held, BuildSlot(t)) // must not wait
			}
			got := make(chan func())
			go func() { got <- BuildSlot(t) }()
			select {
			case r := <-got:
				r()
				t.Fatalf("slot %d of %d taken while all were held", tt.n+1, tt.n)
			case <-time.After(time.Second):
			}
			held[0]()
			(<-got)() // released: the waiting build takes it
			for _, r := range held[1:] {
				r()
			}
		})
	}
}
