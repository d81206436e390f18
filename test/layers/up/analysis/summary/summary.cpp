// Its own PRIVATE link: allowed.
#include "replay/replay.h"
#include "summary/summary.h"
