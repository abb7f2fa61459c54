package result

// Shard is what a run of one slice of a design records (run --shard):
// which shard of how many, and which of the design's repeats it ran. The
// run's records keep the design's repeat numbers, so shards merge without
// renumbering.
type Shard struct {
	Index         int   `json:"index"`          // 0-based
	Count         int   `json:"count"`          // shards of the design
	DesignRepeats int   `json:"design_repeats"` // repeats of the whole design (all shards)
	Repeats       []int `json:"repeats"`        // the design's repeat numbers this shard ran, ascending
}

// ShardSet is what a merge of shards of one design records: how many
// shards the design had and which of them the merge holds.
type ShardSet struct {
	Count         int   `json:"count"`
	DesignRepeats int   `json:"design_repeats"`
	Present       []int `json:"present"`           // shard indexes merged, ascending
	Missing       []int `json:"missing,omitempty"` // shard indexes not given to the merge
	Repeats       []int `json:"repeats"`           // the design's repeat numbers merged, ascending
}

// Block is one machine of a merge that pools machines as blocks (merge
// --blocks): the repeats (after renumbering) that ran on it. Modes are
// paired within each repeat, and repeats are grouped by machine.
type Block struct {
	Machine  string   `json:"machine"`   // the runs' machine ID, else the run's ID
	CPUModel string   `json:"cpu_model"` // as the runs recorded it
	Runs     []string `json:"runs"`      // names of the runs from this machine
	Repeats  []int    `json:"repeats"`   // merged repeat numbers, ascending
}
