package migrate

import (
	"golang.org/x/sync/errgroup"
)

// deleter removes the sources of copied and verified snapshots in batches,
// beside the workers that copy. A batch is made durable first — one syncfs
// per destination filesystem for every copy and index in it, one journal
// fsync for its "deleting" records — and its sources are then rechecked and
// removed by several goroutines at once. Removing a file mostly waits on
// the disk (a filesystem mounted with discard trims every freed extent
// before unlink returns), so deleting one source after another in a worker
// left both the disk queue and the CPUs idle: the copy path ran at a third
// of cp -a.
type deleter struct {
	x     *executor
	limit int
	in    chan *deletion
	done  chan struct{}
	rm    errgroup.Group // removals in flight
}

// startDeleter starts the deleter of one phase; close waits for it.
func (x *executor) startDeleter() *deleter {
	limit := min(x.opts.BatchSize, max(16, 8*x.opts.Workers))
	d := &deleter{x: x, limit: limit, in: make(chan *deletion, limit), done: make(chan struct{})}
	d.rm.SetLimit(x.opts.Workers)
	go d.loop()
	return d
}

// add queues a deletion. It blocks while a full batch waits for its sync,
// which bounds the verified trees held in memory.
func (d *deleter) add(del *deletion) { d.in <- del }

// close deletes what is still queued and waits for every removal.
func (d *deleter) close() {
	close(d.in)
	<-d.done
}

func (d *deleter) loop() {
	defer close(d.done)
	var batch []*deletion
	for del := range d.in {
		batch = append(batch, del)
		if len(batch) >= d.limit {
			d.flush(batch)
			batch = nil
		}
	}
	d.flush(batch)
	_ = d.rm.Wait()
}

// flush makes a batch durable and hands its sources to the removers. A
// failed sync deletes nothing and undoes the copies; a failed journal sync
// leaves the entries pending for the next run.
func (d *deleter) flush(batch []*deletion) {
	if len(batch) == 0 {
		return
	}
	x := d.x
	synced := map[uint64]bool{}
	var ready []*deletion
	for _, del := range batch {
		if dev := devOf(del.dst); !synced[dev] {
			if err := syncFS(del.dst); err != nil {
				del.complete(del.undo(err))
				continue
			}
			synced[dev] = true
		}
		if err := x.j.append(jrecord{Step: stepDeleting, Src: del.s.Source}, false); err != nil {
			del.complete(del.undo(err))
			continue
		}
		ready = append(ready, del)
	}
	if err := x.j.sync(); err != nil {
		for _, del := range ready {
			x.unfinished.Add(1)
			del.complete(err)
		}
		return
	}
	for _, del := range ready {
		d.rm.Go(func() error {
			del.complete(x.finishDeletion(del))
			return nil
		})
	}
}
