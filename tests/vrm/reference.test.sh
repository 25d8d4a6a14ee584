#!/usr/bin/env bash
# An independent VRMC_springBone implementation (springbone_reference.py, Python stdlib)
# against import-vrm + sim: on an avatar with curved, unequal hair chains that it writes
# itself, then (avatar_reference.py) on the generated test avatar files
# (tests/fixtures/vrm/test_avatar_{1,0}.vrm: a full skeleton, VRM 1.0 with a head-space
# center and VRM 0.x with virtual tails, sphere/capsule/extended-plane colliders). Every
# point of every frame within 1e-4 m, at 1 and 4 substeps.
set -eu
python3 "$(dirname "$0")/springbone_reference.py" "${PT_BUILD:-build}"
python3 "$(dirname "$0")/avatar_reference.py" "${PT_BUILD:-build}"
