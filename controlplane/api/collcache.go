package api

import (
	"sync"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// maxKnownCollections bounds knownCollections: past it, it starts again empty.
const maxKnownCollections = 4096

// knownCollections are the collections this API last read while writing a job, by key. A job
// PUT in a collection it knows first tries to create the job without reading the collection and
// the job (saveJob): the store refuses that create when the job exists or the collection is not
// the one known any more (store.JobPutParams.CreateOnly and ExpectCollection), and the PUT then
// reads them as usual. So a stale entry costs one refused write, never a wrong answer. The
// collections are shared read-only.
//
// A refused create costs a replace more than its read alone, so a collection whose last read
// found the job (a replace) is not tried blind until a read finds none: a run of replaces pays
// once, a run of creates (a collection filled by a client, an import) reads once.
type knownCollections struct {
	mu sync.Mutex
	m  map[string]knownCollection
}

// knownCollection is a collection as last read, and whether a create in it is tried blind.
type knownCollection struct {
	c     *store.Collection
	blind bool
}

func knownKey(k store.CollectionKey) string {
	return store.NameKey(k.Subscription) + "\x00" + store.NameKey(k.ResourceGroup) + "\x00" + store.NameKey(k.Name)
}

// blind returns the collection of key k as last read when a create in it is to be tried blind,
// else nil.
func (kc *knownCollections) blind(k store.CollectionKey) *store.Collection {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if e := kc.m[knownKey(k)]; e.blind {
		return e.c
	}
	return nil
}

// read records collection c of key k as read with a job write, which found the job or not.
func (kc *knownCollections) read(k store.CollectionKey, c *store.Collection, jobFound bool) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if kc.m == nil || len(kc.m) >= maxKnownCollections {
		kc.m = map[string]knownCollection{}
	}
	kc.m[knownKey(k)] = knownCollection{c: c, blind: !jobFound}
}

func (kc *knownCollections) forget(k store.CollectionKey) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	delete(kc.m, knownKey(k))
}
