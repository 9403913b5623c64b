import {runSuite} from '../helpers/suites';

runSuite('acceptance/acceptance');
