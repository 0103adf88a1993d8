"""Running an experiment: the Chaos Toolkit control (public as service.control), the runner
and its supervisor, the cluster sampler, the abort watch, the load drivers and the heal."""
