"""What the stored runs say: the analysis and figures of a run, reports, comparisons,
regression checks, and the queries of the run lists and charts."""
