// The tool sources pages, under /tools: the list with the form that adds a
// source, and one source with its tools.
import { Route, Switch } from 'wouter';
import { SourcePage } from './SourcePage';
import { ToolsPage } from './ToolsPage';
import './tools.css';

export default function ToolRoutes() {
  return (
    <Switch>
      <Route path="/">
        <ToolsPage />
      </Route>
      <Route path="/:sourceId">{(params) => <SourcePage key={params.sourceId} sourceId={params.sourceId} />}</Route>
    </Switch>
  );
}
