// Marks a definition as part of a simulated library's ABI.
//
// The sim libraries build with -fvisibility=hidden so that only the names a
// real NVIDIA library exports are visible: the preload library under test
// interposes exactly those, and an accidental extra export could hide a bug.
#pragma once

#define SIM_API extern "C" __attribute__((visibility("default")))
