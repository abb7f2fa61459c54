package report

// loadLabel names a record's load model for the method section: "closed"
// or "open", with "with per-request connections" added when every request
// opened its own connection (run --conn-mode per-request).
func loadLabel(load, connMode string) string {
	if connMode == "" {
		return load
	}
	return load + " with " + connMode + " connections"
}
