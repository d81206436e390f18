// A reader file that reaches up into the reports: check_layers.py must refuse it.
#include "cumemtrace/contract.h"
#include "reports/report.h"
