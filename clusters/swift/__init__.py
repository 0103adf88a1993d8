"""Swift's admin client (recon, dispersion, rings read safely), ring edits, locating an
object's replicas, and scaling out by one device."""
