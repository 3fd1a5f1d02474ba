// The small form that asks for the API key (index.html's #key-dialog): resolves to the key
// entered, rejects when dismissed (Escape).
export function askForKey(refused) {
  const dialog = document.getElementById('key-dialog');
  const form = document.getElementById('key-form');
  const input = document.getElementById('key');
  document.getElementById('key-message').textContent = refused
    ? 'The server refused that key. Enter its API key again:'
    : 'This server needs an API key (the --api-key it was started with):';
  input.value = '';
  dialog.showModal();
  return new Promise((resolve, reject) => {
    const submitted = (event) => {
      event.preventDefault();
      done();
      dialog.close();
      resolve(input.value.trim());
    };
    const dismissed = () => {
      done();
      reject(new Error('the server needs an API key'));
    };
    const done = () => {
      form.removeEventListener('submit', submitted);
      dialog.removeEventListener('cancel', dismissed);
    };
    form.addEventListener('submit', submitted);
    dialog.addEventListener('cancel', dismissed);
  });
}
