package codeclass

// traceAll has the pass report every instruction it counts above the
// baseline to fn (TestISAAgainstObjdumpRealWorld holds each to
// llvm-objdump-14).
func traceAll(st *isaStats, fn func(addr uint64, e ext)) { st.trace = fn }
