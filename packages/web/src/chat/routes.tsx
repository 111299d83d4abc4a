// The signed-in chat pages, under /chat.
import { Route, Switch } from 'wouter';

export default function ChatRoutes() {
  return (
    <Switch>
      <Route path="/">
        <p>chat: not built yet</p>
      </Route>
    </Switch>
  );
}
