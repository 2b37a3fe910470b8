// Two goroutines write one new file, each its own half, with pwrite (os.File.WriteAt)
// in 64 KiB calls; one fsync (Sync) when both are done.
//
//	go build -o two_writers two_writers.go && ./two_writers [FILE] [MIB]   (default: out.bin 64)
//
// It prints its own counts (write calls, bytes, syncs) and its rate over the loop that
// writes and syncs, so that `writebench trace -- ./two_writers` can be checked against
// what the program itself did (docs/trace.md).
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const piece = 64 << 10

func main() {
	path, mib := "out.bin", 64
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if len(os.Args) > 2 {
		mib, _ = strconv.Atoi(os.Args[2])
	}
	file, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	total := int64(mib) << 20
	half := total / 2
	buffer := make([]byte, piece)
	for i := range buffer {
		buffer[i] = 'g'
	}
	var writes, bytes atomic.Int64
	var group sync.WaitGroup
	start := time.Now()
	for writer := int64(0); writer < 2; writer++ {
		group.Add(1)
		go func(base int64) {
			defer group.Done()
			for offset := int64(0); offset < half; offset += piece {
				n, err := file.WriteAt(buffer, base+offset)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				writes.Add(1)
				bytes.Add(int64(n))
			}
		}(writer * half)
	}
	group.Wait()
	if err := file.Sync(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	seconds := time.Since(start).Seconds()
	file.Close()
	fmt.Printf("two_writers: %d MiB by two goroutines in %d pwrite calls of 64 KiB to %s, one fsync: %.0f MB/s (%.3f s)\n",
		mib, writes.Load(), path, float64(bytes.Load())/seconds/1e6, seconds)
	fmt.Printf("counts: writes=%d bytes=%d syncs=1 seconds=%.6f\n", writes.Load(), bytes.Load(), seconds)
}
