package codeclass

// traceAll has the pass report every instruction it counts above the
// baseline to fn (TestISAAgainstObjdumpRealWorld holds each to
// llvm-objdump-14).
func traceAll(st *isaStats, fn func(addr uint64, e ext)) { st.trace = fn }

// llvmLacks are the extensions whose encodings LLVM 14 predates (AVX-IFMA
// came with LLVM 16): llvm-objdump-14 shows them as <unknown>.
var llvmLacks = map[ext]bool{extAVXIFMA: true}
