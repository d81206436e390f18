// A tracker file that reaches up to the writer and names a header that is nowhere: both refused.
#include "write/writer.h"
#include "track/gone.h"
