/** The --vscode-* variables the panel uses, with VS Code's default Light+, Dark+ and High Contrast values. */
export const THEMES: Record<'light' | 'dark' | 'high-contrast', Record<string, string>> = {
  light: {
    'font-family': 'system-ui, sans-serif', 'font-size': '13px', 'editor-font-family': 'monospace',
    foreground: '#3b3b3b', descriptionForeground: '#717171', errorForeground: '#e51400', focusBorder: '#005fb8',
    'panel-background': '#f8f8f8', 'panel-border': '#e5e5e5', 'editor-background': '#ffffff', 'sideBar-background': '#f8f8f8',
    'widget-border': '#e5e5e5', 'editorWidget-background': '#f8f8f8', 'editorWidget-border': '#c8c8c8',
    'badge-background': '#cccccc', 'badge-foreground': '#3b3b3b', 'progressBar-background': '#005fb8',
    'testing-iconPassed': '#388a34', 'charts-yellow': '#bf8803', 'charts-orange': '#d18616', 'charts-blue': '#1a85ff', 'charts-green': '#388a34',
    'inputValidation-errorBackground': '#f2dede', 'inputValidation-errorBorder': '#be1100', 'textPreformat-foreground': '#3b3b3b',
    'panelTitle-activeForeground': '#3b3b3b', 'button-background': '#005fb8', 'button-foreground': '#ffffff', 'button-secondaryBackground': '#e5e5e5', 'button-secondaryForeground': '#3b3b3b',
    'input-background': '#ffffff', 'input-foreground': '#3b3b3b', 'input-border': '#cecece', 'dropdown-background': '#ffffff', 'dropdown-foreground': '#3b3b3b', 'dropdown-border': '#cecece',
    'checkbox-background': '#f8f8f8', 'checkbox-border': '#cecece', 'checkbox-foreground': '#3b3b3b',
  },
  dark: {
    'font-family': 'system-ui, sans-serif', 'font-size': '13px', 'editor-font-family': 'monospace',
    foreground: '#cccccc', descriptionForeground: '#9d9d9d', errorForeground: '#f85149', focusBorder: '#0078d4',
    'panel-background': '#181818', 'panel-border': '#2b2b2b', 'editor-background': '#1f1f1f', 'sideBar-background': '#1f1f1f',
    'widget-border': '#313131', 'editorWidget-background': '#202020', 'editorWidget-border': '#454545',
    'badge-background': '#616161', 'badge-foreground': '#f8f8f8', 'progressBar-background': '#0078d4',
    'testing-iconPassed': '#73c991', 'charts-yellow': '#cca700', 'charts-orange': '#d18616', 'charts-blue': '#3794ff', 'charts-green': '#89d185',
    'inputValidation-errorBackground': '#5a1d1d', 'inputValidation-errorBorder': '#be1100', 'textPreformat-foreground': '#d0d0d0',
    'panelTitle-activeForeground': '#e7e7e7', 'button-background': '#0078d4', 'button-foreground': '#ffffff', 'button-secondaryBackground': '#313131', 'button-secondaryForeground': '#cccccc',
    'input-background': '#313131', 'input-foreground': '#cccccc', 'input-border': '#3c3c3c', 'dropdown-background': '#313131', 'dropdown-foreground': '#cccccc', 'dropdown-border': '#3c3c3c',
    'checkbox-background': '#313131', 'checkbox-border': '#3c3c3c', 'checkbox-foreground': '#cccccc',
  },
  'high-contrast': {
    'font-family': 'system-ui, sans-serif', 'font-size': '13px', 'editor-font-family': 'monospace',
    foreground: '#ffffff', descriptionForeground: '#ffffff', errorForeground: '#f48771', focusBorder: '#f38518', contrastBorder: '#6fc3df',
    'panel-background': '#000000', 'panel-border': '#6fc3df', 'editor-background': '#000000', 'sideBar-background': '#000000',
    'widget-border': '#6fc3df', 'editorWidget-background': '#0c141f', 'editorWidget-border': '#6fc3df',
    'badge-background': '#000000', 'badge-foreground': '#ffffff', 'progressBar-background': '#6fc3df',
    'testing-iconPassed': '#73c991', 'charts-yellow': '#ffd700', 'charts-orange': '#ffa500', 'charts-blue': '#3794ff', 'charts-green': '#89d185',
    'inputValidation-errorBackground': '#000000', 'inputValidation-errorBorder': '#be1100', 'textPreformat-foreground': '#ffd700',
    'panelTitle-activeForeground': '#ffffff', 'button-background': '#000000', 'button-foreground': '#ffffff', 'button-border': '#6fc3df', 'button-secondaryBackground': '#000000', 'button-secondaryForeground': '#ffffff',
    'input-background': '#000000', 'input-foreground': '#ffffff', 'input-border': '#6fc3df', 'dropdown-background': '#000000', 'dropdown-foreground': '#ffffff', 'dropdown-border': '#6fc3df',
    'checkbox-background': '#000000', 'checkbox-border': '#6fc3df', 'checkbox-foreground': '#ffffff',
  },
};

export function themeCss(theme: keyof typeof THEMES): string {
  return `:root{${Object.entries(THEMES[theme]).map(([name, value]) => `--vscode-${name}:${value}`).join(';')}} body{background:var(--vscode-panel-background)}`;
}
