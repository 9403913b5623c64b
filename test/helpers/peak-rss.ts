import {usageProbe} from '../../harness/peak-usage';
import {tempDir} from './connector';

/** The peak RSS of a connector process, as it reports it on exit (harness/peak-usage.ts); its files go in a temp dir of the test file. */
export function peakRssProbe(): {env: Record<string, string>; peakMiB(): number} {
  const probe = usageProbe(tempDir('questback-rss-'));
  return {
    env: probe.env,
    peakMiB: () => {
      const usage = probe.read();
      if (!usage) throw new Error('the process wrote no usage report: it did not exit on its own');
      return usage.peakRssKb / 1024;
    },
  };
}
