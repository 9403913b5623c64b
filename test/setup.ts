// Runs in every test file: whatever temp folders the file made are removed when it ends.
import {removeTempDirs} from './helpers/temp';

afterAll(() => removeTempDirs());
