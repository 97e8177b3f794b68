package plane

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// CreateMany calls create(ctx, i) for every i in [0, n) from creators
// goroutines at once. A call that fails is made again a second later, up
// to 10 times (the API server of a loaded machine refuses some requests);
// once every call is done, the error of one that never succeeded, if any,
// is returned.
func CreateMany(ctx context.Context, n, creators int, create func(ctx context.Context, i int) error) error {
	items := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Value
	for range max(creators, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range items {
				for attempt := 0; ; attempt++ {
					err := create(ctx, i)
					if err == nil {
						break
					}
					if attempt == 10 {
						failed.Store(err)
						break
					}
					time.Sleep(time.Second)
				}
			}
		}()
	}
	for i := range n {
		items <- i
	}
	close(items)
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}
