"""The embedded lab: real storage clusters on this one machine.

Nodes are network namespaces on a private bridge (`netns`), each running its
own OpenSSH server (`sshd`); disks are loop-mounted XFS image files (`disks`);
daemons are tracked only through their pid files (`procs`). `ceph` assembles
these into a 1 mon / 1 mgr / 4 OSD Ceph 16 cluster and writes it into the
inventory, so the rest of Faultline treats it exactly like a remote cluster.

Everything here needs root (namespaces, loop devices, mounts).
"""
