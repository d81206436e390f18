// A tracker file that reaches up to the writer: check_layers.py must refuse it.
#include "write/writer.h"
