package postgres

// PendingPuts is how many job writes wait for the group being committed (tests).
func (d *Driver) PendingPuts() int {
	d.puts.mu.Lock()
	defer d.puts.mu.Unlock()
	return len(d.puts.pending)
}
