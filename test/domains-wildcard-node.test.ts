// The installation's wildcard certificate and custom domains' certificates on the node data plane (node's TLS
// server choosing by SNI; issue 20): see test/helpers/wildcard-suite.ts.
import { wildcardSuite } from './helpers/wildcard-suite.ts';

wildcardSuite('node');
