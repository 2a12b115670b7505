package dio

// Write is one write of WriteAll: Data at offset Off of the file.
type Write struct {
	Off  uint64
	Data []byte
}
