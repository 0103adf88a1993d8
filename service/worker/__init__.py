"""The worker: the procrastinate app that runs Faultline's jobs (runs, heals, load drivers,
the schedules' minute tick), each job calling the services below it."""
