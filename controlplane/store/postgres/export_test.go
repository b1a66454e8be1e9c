package postgres

// PendingPuts is how many job writes wait for the group being committed (tests).
func (d *Driver) PendingPuts() int { return d.puts.Pending() }
