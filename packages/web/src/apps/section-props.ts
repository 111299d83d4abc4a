// What SettingsPage gives each section of its form, apart from SettingsPage.tsx
// so that the sections it renders can name it without importing it back.
import type { ModelList, PublicDataset } from '../api';
import type { Draft } from './draft';

export type SectionProps = {
  draft: Draft;
  change: (patch: Partial<Draft>) => void;
  models: ModelList['models'];
  datasets: PublicDataset[];
  invalid: boolean;
};
