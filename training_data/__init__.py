"""Training data built from the KG and a retriever: silver reasoning chains with candidate negatives
(the Aligner's), and labelled closed-book traces (MIND's trigger calibration)."""
