import {runSuite} from '../helpers/suites';

runSuite('probe/probe');
