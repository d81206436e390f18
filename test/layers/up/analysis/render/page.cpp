// The summary passes the read stage on, not the replay it links PRIVATE.
#include "summary/summary.h"
#include "replay/replay.h"
