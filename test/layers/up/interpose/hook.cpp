// A tracer file that reaches into the analyzer: check_layers.py must refuse it.
#include "cumemtrace/contract.h"
#include "replay/replay.h"
