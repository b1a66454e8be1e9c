//go:build race

package dispatch

// raceDetector says the tests run with -race, under which the compiler's instrumentation moves
// values to the heap that a normal build keeps on the stack: allocation counts do not hold there.
const raceDetector = true
