"""The lag between two screens' sound, from one stereo recording of both.

Reads a 48 kHz stereo s16le recording whose left channel is one screen's sound and whose right
channel is the other's (the right one starting later). From the given number of seconds after the
right channel starts sounding, cross-correlates left and right over 1 s windows, one every 2 s, and
prints each window's lag in milliseconds ("12.0 s: 0.021"): negative when the right screen sounds later.

Usage: python3 scripts/sound_lag.py RECORDING [SETTLE_SECONDS]   (default 2)
Used by Tests/VitrineCLITests/SynchronizedScreensTests.swift and Image/vm-kms-test.sh.
"""
import sys

import numpy as np

rate = 48000
data = np.fromfile(sys.argv[1], dtype="<i2").astype(np.float64)
data = data[: len(data) // 2 * 2].reshape(-1, 2)
settle = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
left, right = data[:, 0], data[:, 1]
loud_right = np.nonzero(np.abs(right) > 300)[0]
loud_left = np.nonzero(np.abs(left) > 300)[0]
if len(loud_right) == 0:
    sys.exit("the right screen never sounded")
if len(loud_left) == 0:
    sys.exit("the left screen never sounded")
start = loud_right[0] + int(settle * rate)
end = min(loud_left[-1], loud_right[-1]) - rate
window, search = rate, rate // 50
position = start
while position + window + search < end:
    a = left[position - search: position + window + search]
    b = right[position: position + window]
    if np.abs(b).max() < 300:
        break
    scores = np.correlate(a, b, mode="valid")
    lag = (np.argmax(scores) - search) / rate * 1000
    print(f"{position / rate:.1f} s: {lag:.3f}")
    position += 2 * rate
