package secret

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/controlplane/store"
)

// scanPage is how many jobs a start-up scan reads at a time.
const scanPage = 500

// Startup returns the Box of the key at keyPath after checking it against the store, and brings
// the stored secrets to the current format. It never replaces a key the store needs:
//
//   - The key file is created (mode 0600) only when it is absent and the store holds no sealed
//     value and no key check value (a first start).
//   - A missing key file while the store holds sealed values or a check value, or a key whose
//     check value differs from the stored one, is an error naming the file: the daemon must not
//     start (its attempts would fail, and new secrets would be sealed with a key the old ones do
//     not share).
//   - A store without a check value (written before it was kept) is checked by opening one of
//     its sealed values; then the check value is stored.
//   - Values in the old unbound format (sealed:v1) are re-sealed bound to the job holding them.
//     A v1 value found in more than one job was copied from one job into another (nonces are
//     random, so two seals never give the same value): it is blanked in every job holding it
//     and logged, and their owners must send that secret again.
func Startup(ctx context.Context, st store.Driver, keyPath string, log *slog.Logger) (*Box, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	check, err := st.MetaGet(ctx, store.MetaGetParams{Name: store.MetaSecretKeyCheck})
	hasCheck := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("reading the secret key's check value from the store: %w", err)
	}
	// A store with a check value needs no sample of its sealed values: only its jobs holding a
	// value of the old format are read (a million jobs without one are not decoded at every
	// start). One without reads every job, as it did before the check value was kept.
	containing := ""
	if hasCheck {
		containing = prefixV1
	}
	scan, err := scanSealed(ctx, st, containing)
	if err != nil {
		return nil, err
	}
	box, err := Load(keyPath)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist):
		if hasCheck || scan.sample != nil {
			return nil, fmt.Errorf("secret key %s is missing, but the database holds secrets sealed with a key: "+
				"restore that file from its backup (a new key would not open them, so none is generated)", keyPath)
		}
		if box, err = Create(keyPath); err != nil {
			return nil, err
		}
		log.Warn("created the secret key that seals job secrets: back it up apart from the database", "path", keyPath)
	default:
		return nil, err
	}
	if hasCheck && check != box.Check() {
		return nil, fmt.Errorf("secret key %s is not the key the database's secrets were sealed with (its check value differs): "+
			"restore the right key file", keyPath)
	}
	if !hasCheck && scan.sample != nil {
		if err := box.opens(scan.sample); err != nil {
			return nil, fmt.Errorf("secret key %s does not open the secrets in the database (job %s: %w): restore the right key file",
				keyPath, scan.sample.Key.CanonicalID(), err)
		}
	}
	if err := box.migrate(ctx, st, scan, log); err != nil {
		return nil, err
	}
	if !hasCheck {
		// Replicas starting together on an empty store: the first check value stored wins, and a
		// replica with another key stops here.
		if err := st.MetaPut(ctx, store.MetaPutParams{Name: store.MetaSecretKeyCheck, Value: box.Check(), IfAbsent: true}); err != nil {
			return nil, fmt.Errorf("storing the secret key's check value: %w", err)
		}
		stored, err := st.MetaGet(ctx, store.MetaGetParams{Name: store.MetaSecretKeyCheck})
		if err != nil {
			return nil, fmt.Errorf("reading the secret key's check value back: %w", err)
		}
		if stored != box.Check() {
			return nil, fmt.Errorf("secret key %s is not the key another replica stored first (its check value differs): "+
				"give every replica the same key file", keyPath)
		}
	}
	if fi, err := os.Stat(keyPath); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the secret key file is readable by other users: make it 0600", "path", keyPath, "mode", fi.Mode().Perm().String())
	}
	return box, nil
}

// sealedScan is what a scan of the jobs found.
type sealedScan struct {
	sample  *store.Job       // a job holding a sealed value (nil: none, or not looked for)
	v1      []int64          // jobs holding unbound values
	v1Count map[string]int   // how many jobs hold each unbound value
	v1Jobs  map[int64]string // a job's canonical id, for the log
}

// scanSealed reads the jobs whose properties text contains containing ("": every job) for their
// sealed values.
func scanSealed(ctx context.Context, st store.Driver, containing string) (*sealedScan, error) {
	s := &sealedScan{v1Count: map[string]int{}, v1Jobs: map[int64]string{}}
	after := int64(0)
	for {
		jobs, err := st.JobListAll(ctx, store.JobListAllParams{AfterID: after, Limit: scanPage, Containing: containing})
		if err != nil {
			return nil, fmt.Errorf("reading the jobs' sealed secrets: %w", err)
		}
		for _, j := range jobs {
			seen := map[string]bool{}
			for _, f := range Fields(&j.Properties) {
				if *f == "" {
					continue
				}
				if s.sample == nil {
					s.sample = j
				}
				if strings.HasPrefix(*f, prefixV1) && !seen[*f] {
					seen[*f] = true
					s.v1Count[*f]++
				}
			}
			if len(seen) > 0 {
				s.v1 = append(s.v1, j.ID)
				s.v1Jobs[j.ID] = j.Key.CanonicalID()
			}
		}
		if len(jobs) < scanPage {
			return s, nil
		}
		after = jobs[len(jobs)-1].ID
	}
}

// opens checks that the box opens the first sealed value of j.
func (b *Box) opens(j *store.Job) error {
	for _, f := range NamedFields(&j.Properties) {
		v := *f.Value
		switch {
		case v == "":
			continue
		case strings.HasPrefix(v, prefixV1):
			_, err := b.open(v[len(prefixV1):], nil)
			return err
		default:
			_, err := b.Open(v, j.Key)
			return err
		}
	}
	return nil
}

// migrate re-seals the unbound values the scan found, bound to their jobs.
func (b *Box) migrate(ctx context.Context, st store.Driver, scan *sealedScan, log *slog.Logger) error {
	copied := func(v string) bool { return scan.v1Count[v] > 1 }
	total := 0
	for _, id := range scan.v1 {
		for attempt := 0; ; attempt++ {
			j, err := st.JobGetByID(ctx, store.JobGetByIDParams{ID: id})
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if err != nil {
				return fmt.Errorf("re-sealing the secrets of job %s: %w", scan.v1Jobs[id], err)
			}
			// j is the driver's fresh record: changed in place.
			resealed, blanked, err := b.MigrateJob(&j.Properties, j.Key, copied)
			if err != nil {
				return fmt.Errorf("re-sealing the secrets of job %s: %w", j.Key.CanonicalID(), err)
			}
			if resealed+blanked == 0 {
				break
			}
			_, _, err = st.JobPut(ctx, store.JobPutParams{Job: *j, ExpectVersion: j.Version, Now: j.UpdatedAt})
			if errors.Is(err, store.ErrConflict) && attempt < 5 {
				continue
			}
			if err != nil {
				return fmt.Errorf("re-sealing the secrets of job %s: %w", j.Key.CanonicalID(), err)
			}
			total += resealed
			if blanked > 0 {
				log.Error("a secret sealed in the old format was found in more than one job (copied from one into another): "+
					"it was removed; send this job's secrets again", "job", j.Key.CanonicalID(), "job_id", j.ID, "removed", blanked)
			}
			break
		}
	}
	if total > 0 {
		log.Info("re-sealed secrets of the old format bound to their jobs", "values", total, "jobs", len(scan.v1))
	}
	return nil
}
