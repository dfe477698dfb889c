// The installation's wildcard certificate on the nginx data plane (issue 20): see test/helpers/wildcard-suite.ts.
import { wildcardSuite } from './helpers/wildcard-suite.ts';

wildcardSuite('nginx');
