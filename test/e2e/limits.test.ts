import {runSuite} from '../helpers/suites';

runSuite('e2e/limits');
